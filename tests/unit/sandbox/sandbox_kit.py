"""Helpers for the sandbox and command-approval tests: a git workspace with canaries around it.

A canary is what an escaped command would change: a marker file outside the workspace (under
/tmp and under /var/tmp, both of which the sandbox replaces with its own tmpfs), a snapshot of
`.git/` and of `.deepseek/`. `Canaries.assert_intact()` proves that nothing happened.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from deepseek_ls.config_models import SandboxConfig
from deepseek_ls.policy.sandbox import Sandbox, probe
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

SANDBOX = Sandbox(Path("/"), config=SandboxConfig()).status()
# Where setup.sh can install bubblewrap (root with apt), the sandbox tests must run, not skip.
requires_sandbox = pytest.mark.skipif(
    not SANDBOX.available and os.geteuid() != 0, reason=f"no working bubblewrap here: {SANDBOX.reason}"
)

# For a test whose command runs the workspace's pytest: the venv's autoloaded third-party plugins
# (pytest-lsp alone imports for seconds) are not what it checks; the workspace's conftest still loads.
NO_PLUGIN_AUTOLOAD = ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


def committed_repo(root: Path, files: Mapping[str, str]) -> Path:
    """Writes `files` (relative path -> text) under `root` and gives it a `.git` holding them as its
    one commit: a copy of a repository built once per process for the same files (git init, add and
    commit are three processes, and the corpora build hundreds of workspaces). The index's stat
    data is the template's: git re-reads a file before taking it as unchanged."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    shutil.copytree(_template_git(tuple(sorted(files.items()))), root / ".git", symlinks=True)
    return root


@functools.cache
def _template_git(files: tuple[tuple[str, str], ...]) -> Path:
    base = Path(tempfile.mkdtemp(prefix="dsls-repo-template-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    for rel, text in files:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    git(base, "init", "-q")
    git(base, "add", ".")
    git(base, "commit", "-q", "-m", "init")
    return base / ".git"


def tree_digest(root: Path) -> dict[str, str]:
    out = {}
    if not root.exists():
        return out
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            out[path.relative_to(root).as_posix() + "/"] = ""
    return out


@dataclass
class Canaries:
    workspace: Path
    markers: list[Path] = field(default_factory=list)
    git_before: dict[str, str] = field(default_factory=dict)
    state_before: dict[str, str] = field(default_factory=dict)

    def snapshot(self) -> "Canaries":
        self.git_before = tree_digest(self.workspace / ".git")
        self.state_before = tree_digest(self.workspace / ".deepseek")
        return self

    def assert_intact(self, *, state: bool = True) -> None:
        """`state=False` when our own patch store legitimately writes `.deepseek/` (patches,
        checkpoints): then only the files that were there (the config) must be unchanged."""
        for marker in self.markers:
            assert not marker.exists(), f"an escaped command created {marker}"
        assert tree_digest(self.workspace / ".git") == self.git_before, ".git/ was changed"
        now = tree_digest(self.workspace / ".deepseek")
        if state:
            assert now == self.state_before, ".deepseek/ was changed"
        else:
            assert {k: now.get(k) for k in self.state_before if not k.endswith("/")} == {
                k: v for k, v in self.state_before.items() if not k.endswith("/")}, ".deepseek/ files were changed"

    def cleanup(self) -> None:
        for marker in self.markers:
            marker.unlink(missing_ok=True)


WORKSPACE_FILES = {  # committed
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "tests/test_app.py": "from src.app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "Makefile": "test:\n\t$(X)\n\techo made\n",
}


def make_workspace(tmp_path: Path) -> tuple[Path, Canaries]:
    root = committed_repo(tmp_path / "ws", WORKSPACE_FILES)
    (root / ".env").write_text("API_TOKEN=canary-env-secret\n")
    (root / ".deepseek").mkdir()
    (root / ".deepseek" / "config.toml").write_text('[policy]\napproval_mode = "suggest"\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    tag = uuid.uuid4().hex[:10]
    canaries = Canaries(root, markers=[outside / "marker", Path("/var/tmp") / f"dsls-canary-{tag}"])
    return root, canaries.snapshot()


class RecordingUI:
    """Answers every approval with `answer` and records the requests."""

    def __init__(self, answer: str = "deny") -> None:
        self.answer = answer
        self.approvals: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        return ApprovalDecision(request_id=request.request_id, answer=self.answer)  # type: ignore[arg-type]

    async def ask_user(self, question, choices=None):
        return None

    def stream(self, channel, text, *, session_id=None) -> None:
        return None

    def progress(self, token, message, percentage=None, *, done=False) -> None:
        return None


__all__ = ["SANDBOX", "requires_sandbox", "probe", "make_workspace", "Canaries", "RecordingUI", "git", "tree_digest",
           "committed_repo", "NO_PLUGIN_AUTOLOAD"]
