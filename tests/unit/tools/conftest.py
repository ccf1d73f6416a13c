"""Fixtures for tool tests: a small git workspace and a ToolHost over it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tools_helpers import build_host

from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'hello'\n\n\ndef helper():\n    return 42\n")
    (root / "README.md").write_text("# Demo\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("generated = True\n")
    (root / "debug.log").write_text("hello from the log\n")
    (root / ".env").write_text("API_TOKEN=hello-secret\n")
    _git(root, "init", "-q")
    _git(root, "add", "src", "README.md", ".gitignore")
    _git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
def ui() -> AutoApproveUI:
    return AutoApproveUI("allow_once")


@pytest.fixture
def overlay(workspace: Path) -> DocumentOverlay:
    return DocumentOverlay(workspace)


@pytest.fixture
def host(workspace: Path, sink: ListSink, ui: AutoApproveUI, overlay: DocumentOverlay) -> ToolHost:
    return build_host(workspace, sink=sink, ui=ui, overlay=overlay)
