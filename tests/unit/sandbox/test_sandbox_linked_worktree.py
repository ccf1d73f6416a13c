"""Git works in a linked worktree (`git worktree add`, every teammate lane) inside the sandbox.

A linked worktree's `.git` is a file naming `<repository>/.git/worktrees/<id>`, outside the
workspace. The sandbox replaces `/tmp` with an empty tmpfs, so when the repository lies under
`/tmp` (a lane of a workspace there, any test) git found no repository: a lane's `git status`
verification failed with "not a git repository: .../.git/worktrees/<id>" every time. Those git
directories are now bound read-only; one that does not belong to the workspace stays hidden.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_kit import git, requires_sandbox, tree_digest

from deepseek_ls.config_models import PolicyConfig, SandboxConfig
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import shell


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    """A directory under /tmp itself (the one the sandbox hides), wherever pytest's tmp_path is."""
    path = Path(tempfile.mkdtemp(prefix="dsls-linked-", dir="/tmp")).resolve()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def repository(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


async def run(root: Path, argv: list[str]) -> shell.CommandResult:
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig())
    return await shell.run_command(argv, cwd=root, timeout=60, max_output_bytes=64_000, sandbox=sandbox)


@requires_sandbox
async def test_git_status_runs_in_a_linked_worktree_of_a_repository_under_tmp(under_tmp: Path) -> None:
    main = repository(under_tmp / "main")
    linked = under_tmp / "lanes" / "lane-1"
    git(main, "worktree", "add", "-q", "-b", "lane/x", str(linked))
    (linked / "src" / "app.py").write_text("x = 2\n")

    status = await run(linked, ["git", "status", "--porcelain"])
    assert status.exit_code == 0, status.stdout + status.stderr
    assert status.stdout.strip() == "M src/app.py"
    head = await run(linked, ["git", "log", "-1", "--format=%s"])
    assert (head.exit_code, head.stdout.strip()) == (0, "base"), head.stdout + head.stderr


@requires_sandbox
async def test_no_unapproved_exec_linked_worktree_git_dirs_are_read_only(under_tmp: Path) -> None:
    """Bound so git can read them, never so a command can plant a hook or config in the repository."""
    main = repository(under_tmp / "main")
    linked = under_tmp / "lanes" / "lane-1"
    git(main, "worktree", "add", "-q", "-b", "lane/x", str(linked))
    admin = next((main / ".git" / "worktrees").iterdir())
    targets = [main / ".git" / "config", main / ".git" / "hooks" / "pre-commit", admin / "HEAD", admin / "config"]
    before = tree_digest(main / ".git")
    code = ("import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'a').write('#evil\\n'); print('WROTE', p)\n"
            "    except OSError as e:\n        print('REFUSED', p)\n")
    result = await run(linked, [sys.executable, "-c", code, *map(str, targets)])
    assert "WROTE" not in result.stdout and result.stdout.count("REFUSED") == len(targets), result.stdout
    commit = await run(linked, ["git", "commit", "--allow-empty", "-q", "-m", "x"])
    assert commit.exit_code != 0
    assert tree_digest(main / ".git") == before


@requires_sandbox
async def test_no_leak_gitfile_naming_a_foreign_worktree_dir_stays_hidden(under_tmp: Path) -> None:
    """A `.git` file may name another repository's worktree directory; that one does not point back
    at this workspace, so nothing of that repository is bound into the sandbox."""
    other = repository(under_tmp / "other")
    (other / ".git" / "secret-marker").write_text("other repository\n")
    git(other, "worktree", "add", "-q", "-b", "side", str(under_tmp / "other-side"))
    admin = next((other / ".git" / "worktrees").iterdir())
    workspace = under_tmp / "ws"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {admin}\n")
    result = await run(workspace, ["cat", str(other / ".git" / "secret-marker")])
    assert result.exit_code != 0 and "other repository" not in result.stdout, result.stdout


def _plain_subdir(under_tmp: Path) -> tuple[Path, Path]:
    main = repository(under_tmp / "main")
    return main / "src", main / ".git"


def _lane_subdir(under_tmp: Path) -> tuple[Path, Path]:
    main = repository(under_tmp / "main")
    lane = under_tmp / "lanes" / "lane-1"
    git(main, "worktree", "add", "-q", "-b", "lane/x", str(lane))
    return lane / "src", main / ".git"


SUBDIR_WORKSPACES = [
    pytest.param(_plain_subdir, id="subdirectory-of-a-repository-under-tmp"),
    pytest.param(_lane_subdir, id="lane-subdirectory-of-a-linked-worktree-under-tmp"),
]


@requires_sandbox
@pytest.mark.parametrize("make", SUBDIR_WORKSPACES)
async def test_no_unapproved_exec_git_of_a_subdirectory_workspace_works_read_only(under_tmp: Path, make) -> None:
    """A workspace below its repository's top level (a lane of such a workspace: `<lane>/src`): the
    top level's `.git` lies outside the workspace, under /tmp, which the sandbox replaced — git found
    no repository. It is bound now (what `git_safety.locate` accepts), read-only like the rest."""
    workspace, gitdir = make(under_tmp)
    (workspace / "app.py").write_text("x = 2\n")
    status = await run(workspace, ["git", "status", "--porcelain", "--", "."])
    assert status.exit_code == 0, status.stdout + status.stderr
    assert status.stdout.strip() == "M src/app.py"  # porcelain paths are relative to the top level
    head = await run(workspace, ["git", "log", "-1", "--format=%s"])
    assert (head.exit_code, head.stdout.strip()) == (0, "base"), head.stdout + head.stderr
    dot = workspace.parent / ".git"
    before = tree_digest(gitdir), dot.read_bytes() if dot.is_file() else b""
    targets = [dot if dot.is_file() else dot / "config", gitdir / "config", gitdir / "hooks" / "post-checkout"]
    code = ("import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'a').write('#evil\\n'); print('WROTE', p)\n"
            "    except OSError as e:\n        print('REFUSED', p)\n")
    result = await run(workspace, [sys.executable, "-c", code, *map(str, targets)])
    assert "WROTE" not in result.stdout and result.stdout.count("REFUSED") == len(targets), result.stdout
    assert (tree_digest(gitdir), dot.read_bytes() if dot.is_file() else b"") == before
