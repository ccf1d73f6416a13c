"""Lane worktrees (agent/lanes/worktree.py) on real git repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from deepseek_ls.agent.lanes import worktree as wt
from deepseek_ls.patch.parse import parse_diff

DENY = [".env", ".env.*", "**/*.pem"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def branches(root: Path) -> list[str]:
    return git(root, "branch", "--list", "lane/*", "--format=%(refname:short)").split()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "gone.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("build/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def make(repo: Path, lane: str = "l1", buffers: dict[str, str] | None = None) -> wt.Worktree:
    return wt.create(repo, repo / ".deepseek", lane, f"lane/s/{lane}", buffers=buffers or {}, deny_paths=DENY)


def test_a_lane_starts_from_the_workspace_as_it_is_now(repo):
    (repo / "a.py").write_text("a = 2  # uncommitted\n")
    (repo / "new.py").write_text("n = 1\n")  # untracked
    (repo / "gone.py").unlink()
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored")
    (repo / ".env").write_text("KEY=secret\n")
    tree = make(repo, buffers={"b.py": "b = 'unsaved'\n", ".env.local": "KEY=2\n"})
    try:
        assert (tree.root / "a.py").read_text() == "a = 2  # uncommitted\n"
        assert (tree.root / "new.py").read_text() == "n = 1\n"
        assert (tree.root / "b.py").read_text() == "b = 'unsaved'\n"  # the editor's unsaved buffer
        assert not (tree.root / "gone.py").exists()
        assert not (tree.root / "build").exists()
        assert not (tree.root / ".env").exists() and not (tree.root / ".env.local").exists()  # secrets stay home
        assert git(tree.tree, "status", "--porcelain") == ""  # all of it is the lane's base commit
        assert branches(repo) == ["lane/s/l1"]
    finally:
        wt.remove(tree)
    assert not tree.tree.exists() and not tree.tree.parent.exists()  # no empty directory left either
    assert branches(repo) == []
    assert (repo / "a.py").read_text() == "a = 2  # uncommitted\n"  # the workspace is untouched


def test_the_result_is_the_lanes_change_against_its_base(repo):
    (repo / "a.py").write_text("a = 2\n")
    tree = make(repo)
    try:
        (tree.root / "a.py").write_text("a = 3\n")
        (tree.root / "c.py").write_text("c = 1\n")
        (tree.root / "junk.pyc").write_text("not asked for")
        result = wt.result_diff(tree, ["a.py", "c.py"])
    finally:
        wt.remove(tree)
    diff = result.diff
    assert "-a = 2\n+a = 3\n" in diff and "+++ b/c.py" in diff and "junk" not in diff
    assert result.binary == []
    assert (repo / "a.py").read_text() == "a = 2\n"


def test_a_result_carries_deletions_new_files_and_text_git_calls_binary(repo):
    """Deletions and new (also empty) files come back as such; a UTF-8 file git would show as
    "Binary files differ" (a `-diff` attribute, a NUL byte) comes back as a text diff; a file
    that is not UTF-8 text is named in `binary` and left out of the diff."""
    (repo / "empty.py").write_text("")
    (repo / "data.txt").write_text("one\n")
    (repo / "nul.txt").write_text("a\x00b\n")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (repo / ".gitattributes").write_text("data.txt -diff\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    tree = make(repo)
    try:
        (tree.root / "gone.py").unlink()
        (tree.root / "empty.py").unlink()
        (tree.root / "pkg").mkdir()
        (tree.root / "pkg" / "__init__.py").write_text("")
        (tree.root / "data.txt").write_text("two\n")
        (tree.root / "nul.txt").write_text("a\x00c\n")
        (tree.root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xfe")
        (tree.root / "a.py").write_bytes(b"a = '\xe9'\n")  # text made latin-1: not UTF-8 any more
        result = wt.result_diff(tree, ["gone.py", "empty.py", "pkg/__init__.py", "data.txt", "nul.txt", "logo.png",
                                       "a.py"])
    finally:
        wt.remove(tree)
    assert result.binary == ["a.py", "logo.png"]
    files = {f.path: f for f in parse_diff(result.diff)}
    assert sorted(files) == ["data.txt", "empty.py", "gone.py", "nul.txt", "pkg/__init__.py"]
    assert files["gone.py"].kind == "delete" and files["gone.py"].hunks[0].old_seq == ["x = 1\n"]
    assert files["empty.py"].kind == "delete" and files["pkg/__init__.py"].kind == "add"
    assert files["data.txt"].hunks[0].body == [("-", "one\n"), ("+", "two\n")]
    assert files["nul.txt"].hunks[0].body == [("-", "a\x00b\n"), ("+", "a\x00c\n")]
    assert not any(f.binary for f in files.values())


def test_a_result_names_the_file_modes_the_lane_changed(repo):
    """A chmod in the lane (a command, a build) is named in `modes`, whether or not the file is one
    of `files`; a new file of `files` made executable too. Content-only changes are not."""
    (repo / "tool.sh").write_text("echo hi\n")
    (repo / "tool.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a tool")
    tree = make(repo)
    try:
        assert wt.result_diff(tree, []).modes == []
        (tree.root / "a.py").chmod(0o755)  # not one of `files`: changed by a command
        (tree.root / "tool.sh").chmod(0o644)
        (tree.root / "gone.py").write_text("x = 2\n")  # content only
        (tree.root / "new.sh").write_text("echo new\n")
        (tree.root / "new.sh").chmod(0o755)
        (tree.root / "plain.py").write_text("p = 1\n")
        result = wt.result_diff(tree, ["gone.py", "new.sh", "plain.py"])
    finally:
        wt.remove(tree)
    assert result.modes == ["a.py (100644 -> 100755)", "new.sh (new, 100755)", "tool.sh (100755 -> 100644)"]
    assert result.binary == [] and "+x = 2" in result.diff


def test_no_leak_a_killed_runs_lanes_are_cleaned_at_the_next_start(repo):
    tree = make(repo)
    (tree.root / "a.py").write_text("dirty, never committed\n")  # a dirty leftover worktree
    info = json.loads(tree.owner_file.read_text())
    tree.owner_file.write_text(json.dumps({**info, "pid": 2**22 + 7, "process": "dead"}))  # its process is gone
    live = make(repo, "l2")  # a lane of this (running) process is left alone
    try:
        removed = wt.cleanup_stale(repo, repo / ".deepseek")
        assert removed == ["lane/s/l1"]
        assert not tree.tree.exists() and not tree.owner_file.exists()
        assert live.tree.exists() and branches(repo) == ["lane/s/l2"]
    finally:
        wt.remove(live)


def test_no_leak_a_lane_that_fails_half_made_is_removed_at_once(repo, monkeypatch):
    def broken(*args, **kwargs):
        raise wt.LaneError("copying failed")

    monkeypatch.setattr(wt, "_copy_uncommitted", broken)
    with pytest.raises(wt.LaneError, match="copying failed"):
        make(repo)
    assert branches(repo) == [] and git(repo, "worktree", "list").count("\n") == 1
    assert not wt.lanes_home(repo).exists() and not list((repo / ".deepseek" / "lanes").glob("*.json"))


def test_an_orphan_lane_branch_without_owner_is_removed(repo):
    git(repo, "branch", "lane/old/step")
    assert wt.cleanup_stale(repo, repo / ".deepseek") == ["lane/old/step"]
    assert branches(repo) == []


@pytest.mark.parametrize("setup, why", [
    pytest.param(lambda p: None, "not a git repository", id="no-git"),
    pytest.param(lambda p: git(p, "init", "-q"), "no commit yet", id="no-commit"),
])
def test_repo_problem_says_why_lanes_cannot_run(tmp_path, setup, why):
    setup(tmp_path)
    assert why in (wt.repo_problem(tmp_path) or "")


def test_repository_hooks_never_run(repo):
    hook = repo / ".git" / "hooks" / "post-checkout"
    marker = repo.parent / "hook-ran"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    tree = make(repo)
    wt.remove(tree)
    assert not marker.exists()
