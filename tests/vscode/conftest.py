"""Fixtures for the VS Code end-to-end tests: the tools (installed by
scripts/setup-vscode.sh from npm/apt), the built .vsix installed once per process,
a git workspace and code-server with a fresh user-data-dir (see vscode_harness.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from vscode_harness import (
    ARTIFACTS, CHROMIUM_CANDIDATES, CODE_SERVER, REPO, CodeServer, Tools, built_vsix, install_extension,
)


@pytest.fixture(scope="session")
def vscode_tools(tmp_path_factory: pytest.TempPathFactory) -> Tools:
    """Install what is missing (idempotent), this process's copy of the built .vsix and the
    extensions dir it is installed in, shared by every window this process starts."""
    vsix = built_vsix(tmp_path_factory.mktemp("vsix"))
    chromium = next((c for c in CHROMIUM_CANDIDATES if os.access(c, os.X_OK)), None)
    assert chromium, "chromium is missing although setup-vscode.sh ran"
    server = REPO / ".venv" / "bin" / "deepseek-ls"
    assert server.exists(), f"{server} is missing: run `.venv/bin/pip install -e '.[test]'`"
    extensions = install_extension(CODE_SERVER, vsix, tmp_path_factory.mktemp("vsix-install") / "extensions")
    return Tools(CODE_SERVER, chromium, vsix, server, extensions)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    out = ARTIFACTS / request.node.name
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    return out


@pytest.fixture
def code_server(vscode_tools: Tools, workspace: Path, tmp_path: Path, artifacts: Path):
    started: list[CodeServer] = []

    def start(env: dict[str, str], settings: dict | None = None) -> CodeServer:
        cs = CodeServer(vscode_tools, workspace, tmp_path / "code-server", env, artifacts / "code-server.log", settings)
        cs.home.mkdir(exist_ok=True)
        started.append(cs)
        return cs.start()

    yield start
    for cs in started:
        cs.stop()


