"""Fixtures for the code index tests: small real workspaces, with or without git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deepseek_ls.config_models import IndexConfig
from deepseek_ls.index import CodeIndex

SAMPLE_FILES = {
    "app/config.py": "import os\n\nDEFAULT_PORT = 8080\n\n\ndef parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n\n\nclass ConfigError(ValueError):\n    pass\n",
    "app/server.py": "from app.config import parse_config\n\n\nclass HTTPServer:\n    def serve_forever(self):\n        cfg = parse_config('port=1')\n        return cfg\n",
    "app/util/strings.py": "def snake_to_camel(name):\n    head, *rest = name.split('_')\n    return head + ''.join(p.title() for p in rest)\n",
    "web/client.ts": "export function fetchUserProfile(id: string) {\n  return fetch(`/users/${id}`);\n}\n\nexport interface UserProfile {\n  name: string;\n}\n",
    "native/lib.rs": "pub struct Parser {\n    pos: usize,\n}\n\nimpl Parser {\n    pub fn new() -> Self { Parser { pos: 0 } }\n}\n\npub fn parse_config_bytes(data: &[u8]) -> usize { data.len() }\n",
    "README.md": "# Sample\n\nRun the HTTPServer with a parsed config.\n",
}


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout


def _make_index(root: Path, **config) -> CodeIndex:
    return CodeIndex(root, root / ".deepseek", IndexConfig(**config))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A plain (non-git) workspace with a few files in several languages."""
    root = tmp_path / "ws"
    root.mkdir()
    write_tree(root, SAMPLE_FILES)
    return root


@pytest.fixture
def git_workspace(tmp_path: Path) -> Path:
    """The same files committed to a git repository."""
    root = tmp_path / "repo"
    root.mkdir()
    write_tree(root, SAMPLE_FILES)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def make_index():
    """`make_index(root, **index_config)` → a CodeIndex with state in ROOT/.deepseek."""
    return _make_index


@pytest.fixture
def git():
    """`git(root, *args)` → stdout; commits work without a user config."""
    return _git
