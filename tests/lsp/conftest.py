"""End-to-end fixtures: the real `deepseek-ls serve --stdio` process driven by a
pytest-lsp client with Neovim's or VS Code's capabilities, in a temporary
workspace (helpers in lsp_harness.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_harness import APP, CLIENTS, TEST_APP, EditorState, start_client
from pytest_lsp import LanguageClient


@pytest.fixture
def workspace(tmp_path: Path, user_config_home: Path) -> Path:
    """A git repository of the user the server runs as (`user_config_home`): patches the test
    stages in it are the server's to offer."""
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(params=CLIENTS)
def client_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def server_env(user_config_home: Path) -> dict[str, str]:
    """The environment of the server process: ours (so a `fake_deepseek` fixture
    requested earlier is reachable), with user config isolated (the test's own)."""
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(user_config_home)
    env.setdefault("DEEPSEEK_API_KEY", "test-key")
    env.setdefault("DEEPSEEK_LS_LOG", "info")
    return env


@pytest_asyncio.fixture
async def editor(
    workspace: Path, client_name: str, server_env: dict[str, str]
) -> AsyncIterator[tuple[LanguageClient, EditorState]]:
    client, state, _ = await start_client(workspace, client_name, server_env)
    yield client, state
    await client.shutdown_session()
    await client.stop()


@pytest.fixture
def app_workspace(workspace: Path) -> Path:
    """A small Python project whose test fails until `add` is fixed."""
    (workspace / "app.py").write_text(APP)
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_app.py").write_text(TEST_APP)
    (workspace / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    return workspace


# Settings every agent test sends: no index build, no retries (a fault fails at once).
AGENT_SETTINGS = {"index": {"enabled": False}, "llm": {"max_retries": 0}}


@pytest_asyncio.fixture
async def agent_editor(
    fake_deepseek, app_workspace: Path, client_name: str, server_env: dict[str, str]
) -> AsyncIterator[tuple[LanguageClient, EditorState]]:
    """The server with the fake DeepSeek on loopback; verification finds the venv's python."""
    env = {
        **server_env,
        "DEEPSEEK_BASE_URL": fake_deepseek.base_url,
        "DEEPSEEK_API_KEY": "test-key",
        "PATH": os.path.dirname(sys.executable) + os.pathsep + server_env.get("PATH", ""),
    }
    client, state, _ = await start_client(app_workspace, client_name, env, initialization_options=AGENT_SETTINGS)
    yield client, state
    await client.shutdown_session()
    await client.stop()
