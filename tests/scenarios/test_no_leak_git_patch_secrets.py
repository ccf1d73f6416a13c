"""Credential files with ordinary names never reach the model through git's patches.

A netrc saved as `notes/hosts.txt` or a Docker `auths` file called `ci/auth.json` has
no name the deny-list knows, so git's exclude pathspecs let it through; the canaries
here are plain words that no redaction rule touches. Each case runs an allowlisted git
command the way verification does (or calls the `git.diff` tool through the planner),
sends the output to the fake DeepSeek server over real HTTP, and searches everything it
received and the event log for the canary. Covered: the work tree, the index, history
(`git log -p`, `git show`), a secret file deleted since, word diffs, and a section cut
by output truncation.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from deepseek_ls.config_models import Config

import pytest
import test_no_leak_secrets
from scenario_kit import scenario_config
from test_no_leak_secrets import (
    DOCKER,
    KUBECONFIG,
    NETRC,
    SERVICE_ACCOUNT,
    Case,
    _plant,
    _run_command,
    _run_planner_with_tool,
    _seen,
    git,
    plain,
)


def _write(rel: str, text: str):
    def write(r: Path, o: Path, c: str) -> None:
        (r / rel).parent.mkdir(parents=True, exist_ok=True)
        (r / rel).write_text(text.replace("{c}", c))
    return write


def _then(*steps):
    def run(r: Path, o: Path, c: str) -> None:
        for step in steps:
            step(r, o, c)
    return run


def _git(*args: str):
    return lambda r, o, c: git(r, *args)


# A netrc whose password is repeated after 3000 lines: with a small output cap, the hunk's
# last lines arrive after the truncation marker, cut from their header.
LONG_NETRC = NETRC + "# padding line\n" * 3000 + "  password {c}\n"

CASES: dict[str, Case] = {
    # the work tree and the index
    "cmd-git-diff-head-netrc": Case({"notes/hosts.txt": NETRC.replace("{c}", "old")}, command="git diff HEAD",
                                    commit=["*"], setup=_write("notes/hosts.txt", NETRC)),
    "cmd-git-diff-worktree-docker": Case({"ci/auth.json": DOCKER.replace("{c}", "old")}, command="git diff",
                                         commit=["*"], setup=_write("ci/auth.json", DOCKER)),
    "cmd-git-diff-cached-kubeconfig": Case({"ops/cluster.yaml": KUBECONFIG.replace("{c}", "old")},
                                           command="git diff --cached", commit=["*"],
                                           setup=_then(_write("ops/cluster.yaml", KUBECONFIG), _git("add", "-A"))),
    "cmd-git-diff-word-diff-netrc": Case({"notes/hosts.txt": NETRC.replace("{c}", "old")},
                                         command="git diff --word-diff HEAD", commit=["*"],
                                         setup=_write("notes/hosts.txt", NETRC)),
    "cmd-git-diff-new-file-added": Case({"app.py": "x = 1\n"}, command="git diff --cached", commit=["*"],
                                        setup=_then(_write("ci/auth.json", DOCKER), _git("add", "-A"))),
    # history
    "cmd-git-log-patch-netrc": Case({"notes/hosts.txt": NETRC}, command="git log -p", commit=["*"]),
    "cmd-git-log-patch-service-account": Case({"deploy/ci.json": SERVICE_ACCOUNT}, command="git log -p -n 3",
                                              commit=["*"]),
    "cmd-git-log-patch-deleted-netrc": Case({"notes/hosts.txt": NETRC}, command="git log -p", commit=["*"],
                                            setup=_git("rm", "-q", "notes/hosts.txt")),
    "cmd-git-log-patch-deleted-committed": Case({"notes/hosts.txt": NETRC}, command="git log -p -n 1", commit=["*"],
                                                setup=_then(_git("rm", "-q", "notes/hosts.txt"),
                                                            _git("commit", "-qm", "remove leaked credentials"))),
    "cmd-git-show-commit-docker": Case({"ci/auth.json": DOCKER}, command="git show HEAD", commit=["*"],
                                       allow=["git show"]),
    "cmd-git-log-patch-truncated": Case({"notes/hosts.txt": LONG_NETRC}, command="git log -p -n 1", commit=["*"]),
    # the git.diff tool: the side that is not the work tree
    "tool-git-diff-rev-deleted-netrc": Case({"notes/hosts.txt": NETRC}, "git_diff", {"rev": "HEAD~1"}, commit=["*"],
                                            setup=_then(_git("rm", "-q", "notes/hosts.txt"),
                                                        _git("commit", "-qm", "remove leaked credentials"))),
    "tool-git-diff-staged-then-reverted": Case({"notes/hosts.txt": "machine a\n"}, "git_diff", {"staged": True},
                                               commit=["*"],
                                               setup=_then(_write("notes/hosts.txt", NETRC), _git("add", "-A"),
                                                           _write("notes/hosts.txt", "machine a\n"))),
}


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git(root, "init", "-q")
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, outside


@pytest.mark.parametrize("name", sorted(CASES), ids=str)
async def test_no_leak_git_patch_of_credential_file(name: str, repo, fake_deepseek, monkeypatch) -> None:
    root, outside = repo
    case = CASES[name]
    canary = plain(uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")))
    _plant(root, outside, case, canary)
    if name == "cmd-git-log-patch-truncated":
        def small_cap() -> Config:
            cfg = scenario_config()
            cfg.policy.max_output_bytes = 4000
            return cfg

        monkeypatch.setattr(test_no_leak_secrets, "scenario_config", small_cap)
    output = None
    if case.command:
        output = await _run_command(root, fake_deepseek, case)
    else:
        await _run_planner_with_tool(root, fake_deepseek, case, canary)
    assert fake_deepseek.requests, "the model was called"
    assert canary not in _seen(fake_deepseek, root)
    if output is not None:
        assert "refused" not in output, output  # the command ran: the file's section was hidden
        assert "is hidden" in output, output


async def test_git_patch_of_ordinary_files_is_shown(repo, fake_deepseek) -> None:
    """The other side: ordinary files' diffs reach the model whole, the work tree's side included."""
    root, outside = repo
    case = Case({"app.py": "def add(a, b):\n    return a + b\n", "notes/hosts.txt": NETRC.replace("{c}", "old")},
                command="git diff", commit=["*"],
                setup=_then(_write("app.py", "def add(a, b):\n    return a - b  # {c}\n"),
                            _write("notes/hosts.txt", NETRC)))
    canary = plain(uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")))
    _plant(root, outside, case, canary)
    output = await _run_command(root, fake_deepseek, case)
    assert f"+    return a - b  # {canary}" in output
    assert "the diff of notes/hosts.txt is hidden: its content looks like netrc" in output
    assert output.count(canary) == 1
