"""Lane worktrees: `git worktree` checkouts made from the workspace's *current* state.

A lane works in `<tmp>/deepseek-ls-lanes/<workspace hash>/<lane id>` on the
branch `lane/<session>/<step>`. Its base is HEAD plus what git does not have
yet: uncommitted and untracked (not ignored) files and the editor's unsaved
buffers, committed on the lane branch as "lane base" so the lane's result is
exactly `git diff <base>`. Files the deny-list matches (`.env`, keys) and the
workspace's `.deepseek/` are never copied.

Every git call here is bounded, has no terminal prompt, and runs with the
repository's hooks and fsmonitor turned off: a lane never runs code the
repository brings along. An owner file per lane (`<state>/lanes/<id>.json`,
with the pid) lets the next start remove lanes a killed run left behind
without touching those of a process still running.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import STATE_DIR_NAME

GIT_TIMEOUT = 120.0
_SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "commit.gpgsign=false",
         "-c", "core.quotepath=false", "-c", "user.name=deepseek-ls", "-c", "user.email=lanes@deepseek-ls.invalid"]
BRANCH_PREFIX = "lane/"
_PROCESS = uuid.uuid4().hex
# `git worktree add/remove/prune` of one repository must not run at once (git reads the other
# worktrees' admin directories while it makes a new one): lanes start and end in threads.
_ADMIN = threading.Lock()  # tells this process's lanes from those of a dead one that had the same pid


class LaneError(Exception):
    """A lane could not be made, read or removed; the message says why."""


@dataclass
class Worktree:
    lane_id: str
    branch: str
    tree: Path  # the worktree's top directory
    root: Path  # the workspace inside it (the same as `tree` unless the workspace is a subdirectory)
    base: str  # the "lane base" commit
    copied: int  # files copied from the workspace (uncommitted, untracked, unsaved)
    owner_file: Path


def git(cwd: Path, *args: str, timeout: float = GIT_TIMEOUT, check: bool = True) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", *_SAFE, *args], cwd=cwd, capture_output=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise LaneError("git is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise LaneError(f"git {args[0]} took longer than {timeout:g}s") from exc
    if check and done.returncode != 0:
        raise LaneError(f"git {' '.join(args[:2])} failed: {done.stderr.decode(errors='replace').strip()[:500]}")
    return done.stdout.decode("utf-8", errors="surrogateescape")


def repo_problem(root: Path) -> str | None:
    """Why lanes cannot run in `root` (not a git repository, no commit yet), or None."""
    if shutil.which("git") is None:
        return "git is not installed"
    try:
        inside = git(root, "rev-parse", "--is-inside-work-tree", check=False).strip()
    except LaneError as exc:
        return str(exc)
    if inside != "true":
        return f"{root} is not a git repository"
    if not git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        return "the repository has no commit yet"
    return None


def lanes_home(root: Path) -> Path:
    """Where this workspace's lane worktrees live: outside the workspace (editors, indexers and
    file watchers never see them), one directory per workspace."""
    key = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "deepseek-ls-lanes" / key


def create(root: Path, state_dir: Path, lane_id: str, branch: str, *, buffers: dict[str, str],
           deny_paths: list[str]) -> Worktree:
    """A worktree on `branch` holding the workspace as it is now, committed as the lane's base."""
    root = Path(root).resolve()
    top = Path(git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    prefix = root.relative_to(top) if root != top else Path()
    tree = lanes_home(root) / lane_id
    owner_file = _owner_dir(state_dir) / f"{lane_id}.json"
    owner_file.parent.mkdir(parents=True, exist_ok=True)
    owner_file.write_text(json.dumps({"pid": os.getpid(), "process": _PROCESS, "tree": str(tree), "branch": branch, "top": str(top)}))
    tree.parent.mkdir(parents=True, exist_ok=True)
    with _ADMIN:
        git(top, "worktree", "add", "--quiet", "-b", branch, str(tree), "HEAD")
    lane_root = tree / prefix
    policy = PathPolicy(root, deny_paths)
    copied = _copy_uncommitted(top, tree, prefix, policy)
    for rel, text in sorted(buffers.items()):
        if not _copyable(rel, policy):
            continue
        target = lane_root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        copied += 1
    git(tree, "add", "-A")
    git(tree, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", "lane base: the workspace as it was")
    base = git(tree, "rev-parse", "HEAD").strip()
    return Worktree(lane_id, branch, tree, lane_root, base, copied, owner_file)


def _copyable(rel: str, policy: PathPolicy) -> bool:
    rel = rel.replace("\\", "/")
    if rel == STATE_DIR_NAME or rel.startswith(STATE_DIR_NAME + "/"):
        return False
    try:
        policy.resolve(rel)
    except Exception:  # noqa: BLE001 - outside the root, a secret location: not for a lane
        return False
    return policy.is_allowed(rel)


def _copy_uncommitted(top: Path, tree: Path, prefix: Path, policy: PathPolicy) -> int:
    """Copy modified, added and untracked files (not ignored) into the worktree; remove deleted ones."""
    out = git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
    copied = 0
    for entry in filter(None, out.split("\0")):
        code, path = entry[:2], entry[3:]
        src, dst = top / path, tree / path
        try:
            rel = (top / path).relative_to(top / prefix).as_posix()
        except ValueError:
            rel = None  # outside the workspace (a subdirectory workspace): copied as it is in git
        if rel is not None and not _copyable(rel, policy):
            continue
        if "D" in code and not src.exists():
            dst.unlink(missing_ok=True)
            continue
        if src.is_file() or src.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.unlink(missing_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
            copied += 1
    return copied


def result_diff(wt: Worktree, files: list[str]) -> str:
    """The lane's change of `files` (workspace-relative) against its base, as a git unified diff."""
    if not files:
        return ""
    prefix = wt.root.relative_to(wt.tree)
    paths = [(prefix / f).as_posix() for f in sorted(set(files))]
    git(wt.tree, "add", "-A", "--", *paths)
    rel = [] if str(prefix) == "." else [f"--relative={prefix.as_posix()}"]
    return git(wt.tree, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-renames", "--src-prefix=a/",
               "--dst-prefix=b/", *rel, wt.base, "--", *paths)


def remove(wt: Worktree) -> None:
    """Remove the worktree, its branch and its owner file (whatever state they are in)."""
    _remove(Path(json.loads(wt.owner_file.read_text())["top"]) if wt.owner_file.exists() else wt.tree,
            wt.tree, wt.branch)
    shutil.rmtree(wt.owner_file.parent / wt.lane_id, ignore_errors=True)  # the lane's patch store
    wt.owner_file.unlink(missing_ok=True)


def _remove(top: Path, tree: Path, branch: str) -> None:
    with _ADMIN:
        if tree.exists():
            git(top, "worktree", "remove", "--force", "--force", str(tree), check=False)
            shutil.rmtree(tree, ignore_errors=True)
        git(top, "worktree", "prune", check=False)
        if branch.startswith(BRANCH_PREFIX):
            git(top, "branch", "-D", branch, check=False)
        try:
            tree.parent.rmdir()  # the workspace's lanes directory, once its last lane is gone
        except OSError:
            pass


def _owner_dir(state_dir: Path) -> Path:
    return Path(state_dir) / "lanes"


def _alive(pid: int, process: str | None) -> bool:
    if pid == os.getpid():
        return process == _PROCESS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup_stale(root: Path, state_dir: Path) -> list[str]:
    """Remove lanes a killed or crashed run left (their owner process is gone): worktree, branch, owner
    file; then lane branches no worktree uses any more. Returns the branches removed."""
    removed: list[str] = []
    owners = _owner_dir(state_dir)
    live_branches: set[str] = set()
    for owner in sorted(owners.glob("*.json")) if owners.is_dir() else []:
        try:
            info = json.loads(owner.read_text())
        except (OSError, ValueError):
            owner.unlink(missing_ok=True)
            continue
        if _alive(int(info.get("pid", 0)), info.get("process")):
            live_branches.add(info.get("branch", ""))
            continue
        _remove(Path(info.get("top") or root), Path(info["tree"]), info.get("branch", ""))
        removed.append(info.get("branch", ""))
        shutil.rmtree(owner.with_suffix(""), ignore_errors=True)
        owner.unlink(missing_ok=True)
    if repo_problem(root) is None:
        with _ADMIN:
            git(root, "worktree", "prune", check=False)
        listed = git(root, "branch", "--list", f"{BRANCH_PREFIX}*", "--format=%(refname:short)", check=False)
        used = _worktree_branches(root)
        for branch in listed.split():
            if branch not in live_branches and branch not in used:
                git(root, "branch", "-D", branch, check=False)
                removed.append(branch)
    return removed


def _worktree_branches(root: Path) -> set[str]:
    out = git(root, "worktree", "list", "--porcelain", check=False)
    return {line.split(" ", 1)[1].removeprefix("refs/heads/") for line in out.splitlines()
            if line.startswith("branch ")}
