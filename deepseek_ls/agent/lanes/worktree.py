"""Lane worktrees: `git worktree` checkouts made from the workspace's *current* state.

A lane works in `<tmp>/deepseek-ls-lanes/<workspace hash>/<lane id>` on the
branch `lane/<session>/<step>`. Its base is HEAD plus what git does not have
yet: uncommitted and untracked (not ignored) files and the editor's unsaved
buffers, committed on the lane branch as "lane base" so the lane's result is
exactly `git diff <base>`. Files the deny-list matches (`.env`, keys) and the
workspace's `.deepseek/` are never copied.

Every git process here goes through `policy/git_safety.py`, like every other git
the product starts: a fixed `GIT_DIR` / `GIT_WORK_TREE`, none of the caller's `GIT_*`
variables, no system config, and every program-valued setting (filters, diff
drivers, textconv, pagers, fsmonitor, hooks, ...) switched off on the command line.
The workspace's repository and each lane's linked worktree are prepared on their
own, so a setting that only applies inside a lane (`includeIf "onbranch:lane/**"`,
`includeIf "gitdir:..."`) is switched off there too; for the same reason the
worktree is made without a checkout and checked out by the lane's own safe git,
and removed by deleting it and pruning (git never looks inside it again). Files
are therefore checked out and hashed as stored, without the repository's filters.

An owner file per lane (`<state>/lanes/<id>.json`, with the pid) lets the next
start remove lanes a killed run left behind without touching those of a process
still running.
"""

from __future__ import annotations

import dataclasses
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

from deepseek_ls.policy import PathPolicy, git_safety
from deepseek_ls.policy.launch import ProgramNotRun
from deepseek_ls.workspace import STATE_DIR_NAME

GIT_TIMEOUT = git_safety.GIT_TIMEOUT_SECONDS
# What a lane's own commits need on top of git_safety's overrides: no signing, a fixed author.
_LANE = ("-c", "commit.gpgsign=false", "-c", "core.quotepath=false", "-c", "user.name=deepseek-ls",
         "-c", "user.email=lanes@deepseek-ls.invalid")
BRANCH_PREFIX = "lane/"
_PROCESS = uuid.uuid4().hex  # tells this process's lanes from those of a dead one that had the same pid
# `git worktree add/prune` of one repository must not run at once (git reads the other
# worktrees' admin directories while it makes a new one): lanes start and end in threads.
_ADMIN = threading.Lock()


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


def safe_git(where: Path) -> git_safety.SafeGit:
    """`SafeGit` for the repository (or lane worktree) `where` is in, run from its top level."""
    if shutil.which("git") is None:
        raise LaneError("git is not installed")
    try:
        safe = git_safety.prepare(where)
    except git_safety.UnsafeRepository as exc:
        raise LaneError(str(exc)) from exc
    except ProgramNotRun as exc:
        raise LaneError(str(exc)) from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaneError(f"git cannot read the repository at {where}: {exc}") from exc
    if safe is None:
        raise LaneError(f"{where} is not a git repository")
    return dataclasses.replace(safe, cwd=safe.location.worktree)


def git(safe: git_safety.SafeGit, *args: str, timeout: float = GIT_TIMEOUT, check: bool = True) -> str:
    """Run git through `safe` (bounded, nothing of the repository's run); its stdout."""
    try:
        done = safe.run(*_LANE, *args, check=check, timeout=timeout)
    except git_safety.GitError as exc:
        raise LaneError(str(exc).replace(" ".join(_LANE) + " ", "")) from exc
    except ProgramNotRun as exc:
        raise LaneError(str(exc)) from exc
    return done.stdout.decode("utf-8", errors="surrogateescape")


def repo_problem(root: Path) -> str | None:
    """Why lanes cannot run in `root` (not a git repository, an unsafe one, no commit yet), or None."""
    try:
        safe = safe_git(root)
        if not git(safe, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
            return "the repository has no commit yet"
    except LaneError as exc:
        return str(exc)
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
    home = safe_git(root)
    top = home.location.worktree
    prefix = root.relative_to(top) if root != top else Path()
    tree = lanes_home(root) / lane_id
    owner_file = _owner_dir(state_dir) / f"{lane_id}.json"
    owner_file.parent.mkdir(parents=True, exist_ok=True)
    owner_file.write_text(json.dumps({"pid": os.getpid(), "process": _PROCESS, "tree": str(tree), "branch": branch,
                                      "top": str(top)}))
    tree.parent.mkdir(parents=True, exist_ok=True)
    added = False
    try:
        with _ADMIN:
            # No checkout here: inside the lane other settings may apply (its branch, its git directory).
            git(home, "worktree", "add", "--quiet", "--no-checkout", "-b", branch, str(tree), "HEAD")
        added = True
        lane = safe_git(tree)
        git(lane, "reset", "--quiet", "--hard", "--no-recurse-submodules", "HEAD")
        lane_root = tree / prefix
        policy = PathPolicy(root, deny_paths)
        copied = _copy_uncommitted(home, tree, prefix, policy)
        for rel, text in sorted(buffers.items()):
            if not _copyable(rel, policy):
                continue
            target = lane_root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            copied += 1
        git(lane, "add", "-A")
        git(lane, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", "lane base: the workspace as it was")
        base = git(lane, "rev-parse", "HEAD").strip()
    except BaseException:
        # Half made: nobody gets a Worktree to remove, so it goes now (not at the next start).
        if added:
            _remove(top, tree, branch)
        else:
            try:
                tree.parent.rmdir()
            except OSError:
                pass
        owner_file.unlink(missing_ok=True)
        raise
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


def _copy_uncommitted(home: git_safety.SafeGit, tree: Path, prefix: Path, policy: PathPolicy) -> int:
    """Copy modified, added and untracked files (not ignored) into the worktree; remove deleted ones."""
    top = home.location.worktree
    out = git(home, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
              "--ignore-submodules=all")
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


@dataclass
class LaneDiff:
    """A lane's result: the unified diff of its text files (additions and deletions included), the
    files it changed that are not UTF-8 text, and the file modes it changed ("run.sh (100644 ->
    100755)"): a PatchSet carries neither of the last two."""

    diff: str
    binary: list[str]
    modes: list[str] = dataclasses.field(default_factory=list)


# Regular files' modes: what `chmod +x` changes and a text patch cannot carry.
_FILE_MODES = ("100644", "100755")


def result_diff(wt: Worktree, files: list[str]) -> LaneDiff:
    """The lane's change of `files` (workspace-relative) against its base.

    A file counts as text when what it holds on both sides (the base, the lane; a side where it
    does not exist is nothing) is UTF-8: such a file is diffed as text whatever git's attributes
    or its NUL-byte guess say (`-diff`, `binary`), because the PatchSet it becomes is text. Any
    other file is listed in `binary`, never in the diff. `modes` lists every file of the workspace
    whose mode the lane changed (`chmod +x` by a command or a build, `files` or not), and a new
    file of `files` made executable."""
    prefix = wt.root.relative_to(wt.tree)
    rel = [] if str(prefix) == "." else [f"--relative={prefix.as_posix()}"]
    lane = safe_git(wt.tree)
    if not files:
        return LaneDiff("", [], _mode_changes(lane, wt, rel))
    rels = sorted(set(files))
    paths = [(prefix / f).as_posix() for f in rels]
    git(lane, "add", "-A", "--", *paths)
    modes = _mode_changes(lane, wt, rel)
    text = [path for path in paths if _utf8_both_sides(lane, wt, path)]
    binary = [rel for rel, path in zip(rels, paths) if path not in text]
    if not text:
        return LaneDiff("", binary, modes)
    diff = git(lane, "diff", "--cached", "--text", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
               "--ignore-submodules=all", "--src-prefix=a/", "--dst-prefix=b/", *rel, wt.base, "--", *text)
    return LaneDiff(diff, binary, modes)


def _mode_changes(lane: git_safety.SafeGit, wt: Worktree, rel: list[str]) -> list[str]:
    """Files (in the index: tracked, or `files` just added) whose mode in the lane's checkout is not
    their base's: "path (old -> new)", a new executable file "path (new, 100755)"."""
    out = git(lane, "diff", "--raw", "-z", "--no-renames", "--ignore-submodules=all", *rel, wt.base)
    fields = out.split("\0")
    changed: list[str] = []
    for meta, path in zip(fields[0::2], fields[1::2]):
        old, new, *_ = meta.lstrip(":").split(" ")
        if new not in _FILE_MODES or old == new:
            continue  # deleted, a symlink or a submodule (a type change is no mode change), or the same
        if old in _FILE_MODES:
            changed.append(f"{path} ({old} -> {new})")
        elif old == "000000" and new == "100755":
            changed.append(f"{path} (new, {new})")
    return changed


def _utf8_both_sides(lane: git_safety.SafeGit, wt: Worktree, path: str) -> bool:
    now = wt.tree / path
    if now.is_symlink() or (now.exists() and not now.is_file()):
        return False  # a symlink or a directory (a submodule) is no text file
    sides = [now.read_bytes()] if now.exists() else []
    try:
        before = lane.run("cat-file", "blob", f"{wt.base}:{path}", check=False)  # fails: not in the base
    except git_safety.GitError as exc:
        raise LaneError(str(exc)) from exc
    if before.returncode == 0:
        sides.append(before.stdout)
    try:
        for data in sides:
            data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def remove(wt: Worktree) -> None:
    """Remove the worktree, its branch and its owner file (whatever state they are in)."""
    _remove(Path(json.loads(wt.owner_file.read_text())["top"]) if wt.owner_file.exists() else wt.tree,
            wt.tree, wt.branch)
    shutil.rmtree(wt.owner_file.parent / wt.lane_id, ignore_errors=True)  # the lane's patch store
    wt.owner_file.unlink(missing_ok=True)


def _remove(top: Path, tree: Path, branch: str) -> None:
    """Delete the worktree's directory, then let git forget it (`worktree prune` only reads its own
    admin files; `worktree remove` would look inside the checkout first) and drop the branch."""
    with _ADMIN:
        if tree.exists():
            shutil.rmtree(tree, ignore_errors=True)
        try:
            home = safe_git(top)
        except LaneError:
            home = None  # the repository is gone or unsafe now: the directory is removed, that is all
        if home is not None:
            git(home, "worktree", "prune", check=False)
            if branch.startswith(BRANCH_PREFIX):
                git(home, "branch", "-D", branch, check=False)
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
        home = safe_git(root)
        with _ADMIN:
            git(home, "worktree", "prune", check=False)
        listed = git(home, "branch", "--list", f"{BRANCH_PREFIX}*", "--format=%(refname:short)", check=False)
        used = _worktree_branches(home)
        for branch in listed.split():
            if branch not in live_branches and branch not in used:
                git(home, "branch", "-D", branch, check=False)
                removed.append(branch)
    return removed


def _worktree_branches(home: git_safety.SafeGit) -> set[str]:
    out = git(home, "worktree", "list", "--porcelain", check=False)
    return {line.split(" ", 1)[1].removeprefix("refs/heads/") for line in out.splitlines()
            if line.startswith("branch ")}
