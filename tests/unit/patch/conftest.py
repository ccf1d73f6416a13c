"""Fixtures for patch tests: a git workspace and a PatchStore over it."""

from __future__ import annotations

from pathlib import Path

import pytest
from patch_helpers import git, make_store

from deepseek_ls.patch import PatchStore
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.sink import ListSink


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
def overlay(workspace: Path) -> DocumentOverlay:
    return DocumentOverlay(workspace)


@pytest.fixture
def store(workspace: Path, sink: ListSink, overlay: DocumentOverlay) -> PatchStore:
    return make_store(workspace, sink=sink, overlay=overlay)

