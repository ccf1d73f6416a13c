"""Helpers for the sandbox and command-approval tests: a git workspace with canaries around it.

A canary is what an escaped command would change: a marker file outside the workspace (under
/tmp and under /var/tmp, both of which the sandbox replaces with its own tmpfs), a snapshot of
`.git/` and of `.deepseek/`. `Canaries.assert_intact()` proves that nothing happened.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import uuid
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


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


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


def make_workspace(tmp_path: Path) -> tuple[Path, Canaries]:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("from src.app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (root / ".env").write_text("API_TOKEN=canary-env-secret\n")
    (root / "Makefile").write_text("test:\n\t$(X)\n\techo made\n")
    (root / ".deepseek").mkdir()
    (root / ".deepseek" / "config.toml").write_text('[policy]\napproval_mode = "suggest"\n')
    git(root, "init", "-q")
    git(root, "add", "src", "tests", "Makefile", "pytest.ini")
    git(root, "commit", "-q", "-m", "init")
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


__all__ = ["SANDBOX", "requires_sandbox", "probe", "make_workspace", "Canaries", "RecordingUI", "git", "tree_digest"]
