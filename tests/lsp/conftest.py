"""End-to-end fixtures: the real `deepseek-ls serve --stdio` process driven by a
pytest-lsp client with Neovim's or VS Code's capabilities, in a temporary
workspace (helpers in lsp_harness.py)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_harness import CLIENTS, EditorState, start_client
from pytest_lsp import LanguageClient


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(params=CLIENTS)
def client_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """The environment of the server process: ours (so a `fake_deepseek` fixture
    requested earlier is reachable), with user config isolated."""
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
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
