"""Helpers for the sandbox and command-approval tests: a git workspace with canaries around it.

A canary is what an escaped command would change: a marker file outside the workspace (under
/tmp, which the sandbox replaces with its own tmpfs, and in `visible_scratch()`, which it shows
read-only, so a write that escaped would reach the host), a snapshot of
`.git/` and of `.deepseek/`. `Canaries.assert_intact()` proves that nothing happened.

A fake home for the never-leak tests must lie where the sandbox would show it but for the home's
own hiding (`scratch_home()`): under /tmp, /var/tmp or the runtime directory the sandbox hides it
anyway, and a test whose home is there passes with the home's tmpfs and the masks turned off. A
control file beside the home, with its own canary, must be read inside the sandbox
(`ScratchHome.assert_control_read`): that proves the place is visible and the hiding is the home's.
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
from deepseek_ls.policy import sandbox_home, sandbox_sockets
from deepseek_ls.policy.sandbox import Sandbox, probe
from deepseek_ls.testkit.canary import plant_secret
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
    # Outside the workspace where the sandbox shows it (read-only): a sandboxed write there would
    # reach the host. (Under /var/tmp, hidden whole, only where no such place exists.)
    shown = _visible_scratch() or Path("/var/tmp")
    canaries = Canaries(root, markers=[outside / "marker", shown / f"dsls-canary-{tag}"])
    return root, canaries.snapshot()


CHECKOUT = Path(__file__).resolve().parents[3]
SCRATCH = ".sandbox-scratch"  # under the checkout; gitignored


def _hidden_places() -> list[Path]:
    """Where the sandbox hides everything whatever the test checks: its own /tmp and /run, /var/tmp,
    the runtime directory, and the homes it hides (this process's $HOME and the account's own)."""
    places = [sandbox_home.TMP, Path("/run"), *sandbox_sockets.ALWAYS_HIDDEN, *sandbox_home.home_dirs(Path.home())]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        places.append(Path(runtime))
    return [Path(os.path.realpath(p)) for p in places]


def visible_scratch(room: int = 0) -> Path:
    """A writable directory the sandbox shows (it binds `/` read-only): `.sandbox-scratch` in this
    checkout when the checkout is in no hidden place, else, as root (CI), one under /var/lib or
    /srv; else the test is skipped, saying why. `room`: characters a test appends to the path (a
    Unix socket's path must stay under 108 bytes), a longer candidate is passed over."""
    found = _visible_scratch(room)
    if found is not None:
        return found
    hidden = _hidden_places()
    pytest.skip(f"no writable place the sandbox shows for a fake home: the checkout {CHECKOUT} lies under one it "
                f"hides ({', '.join(map(str, hidden))}) or is too long by {room} characters, and /var/lib needs root")


def _visible_scratch(room: int = 0) -> Path | None:
    hidden = _hidden_places()
    candidates = [CHECKOUT / SCRATCH]
    if os.geteuid() == 0:
        candidates += [Path("/var/lib/deepseek-ls-tests"), Path("/srv/deepseek-ls-tests")]
    for candidate in candidates:
        where = Path(os.path.realpath(candidate))
        if (any(where.is_relative_to(h) for h in hidden) or not os.access(where.parent, os.W_OK)
                or len(str(where)) + room > 107):
            continue
        where.mkdir(exist_ok=True)
        return where
    return None


@dataclass
class ScratchHome:
    """A fake home (`home`) in a visible place, and beside it (same parent) a control file holding
    its own canary word, which a sandboxed command must be able to read."""
    home: Path
    control: Path
    control_word: str

    def assert_control_read(self, output: str) -> None:
        assert self.control_word in output, (
            f"the test's premise broke: {self.control}, beside the fake home, was not readable in the sandbox, "
            f"so the home's files being hidden proves nothing about the home's hiding. Output:\n{output}")

    def cleanup(self) -> None:
        shutil.rmtree(self.home.parent, ignore_errors=True)


def scratch_home(prefix: str = "dsls-home-", room: int = 0) -> ScratchHome:
    """A new `ScratchHome` under `visible_scratch(room + its own names)`; the caller calls `cleanup()`."""
    parent = Path(tempfile.mkdtemp(prefix=prefix, dir=visible_scratch(room + len(prefix) + 15)))
    home = parent / "home"
    home.mkdir()
    control = parent / "control.txt"
    return ScratchHome(home, control, plant_secret(control, label="control"))


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
           "committed_repo", "NO_PLUGIN_AUTOLOAD", "ScratchHome", "scratch_home", "visible_scratch"]
