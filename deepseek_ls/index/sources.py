"""What the index should contain: the workspace's files and where to read them.

In a git repository the snapshot is the baseline commit's tree (`git ls-tree`,
blobs read with one `git cat-file --batch` process, so the index describes
exactly that commit) plus the working-tree changes as an overlay read from disk
(modified, staged, untracked-but-not-ignored; deleted files drop out). Outside
git it is a walk honouring every `.gitignore` on the way down (pathspec). Paths
are workspace-relative POSIX strings, always in sorted order.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pathspec

from ..globs import gitignore_spec, unanchored
from ..policy import git_safety
from ..policy.launch import ProgramNotRun
from ..workspace import STATE_DIR_NAME

log = logging.getLogger(__name__)

ALWAYS_EXCLUDED_DIRS = frozenset({".git", STATE_DIR_NAME})


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    oid: str | None = None  # git blob id when read from the baseline commit, else None (disk)


@dataclass
class Snapshot:
    root: Path
    git: bool
    baseline_commit: str | None
    ignore_rules_hash: str
    files: dict[str, SourceFile] = field(default_factory=dict)
    # (mtime_ns, size) of disk files, when the enumeration already had them (the walk)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)


class SourceError(RuntimeError):
    """The workspace could not be enumerated (e.g. git failed)."""


# Every wait on a child process is bounded (a stuck git must not hang the index), and git runs
# with the repository's program-running settings switched off (policy/git_safety.py).
GIT_TIMEOUT_SECONDS = git_safety.GIT_TIMEOUT_SECONDS


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        safe = git_safety.prepare(root)
        if safe is None:
            raise SourceError(f"{root} is not in a git repository")
        return safe.run(*args, check=check, timeout=GIT_TIMEOUT_SECONDS)
    except (git_safety.GitError, git_safety.UnsafeRepository, subprocess.TimeoutExpired, ProgramNotRun) as error:
        raise SourceError(str(error)) from None


def _z(output: bytes) -> list[str]:
    return [p for p in output.decode("utf-8", "surrogateescape").split("\0") if p]


@functools.lru_cache(maxsize=64)
def in_git(root: Path) -> bool:
    """Whether `root` is inside a git work tree (cached: asked on every update)."""
    try:
        if git_safety.locate(root) is None:
            return False
        proc = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    except git_safety.UnsafeRepository as error:  # e.g. a `.git` pointing at another repository
        log.warning("indexing %s without git: %s", root, error)
        return False
    except SourceError as error:
        log.warning("indexing %s without git: %s", root, error)
        return False
    return proc.returncode == 0 and proc.stdout.strip() == b"true"


def _excluded(path: str) -> bool:
    """Never indexed: our state, git's internals, and names that are not UTF-8
    (they cannot be stored in the index or the manifest; logged once each)."""
    if path.split("/", 1)[0] in ALWAYS_EXCLUDED_DIRS:
        return True
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        if path not in _warned_names:
            _warned_names.add(path)
            log.warning("not indexing %r: its name is not valid UTF-8", path)
        return True
    return False


_warned_names: set[str] = set()


def _is_regular_file(root: Path, rel: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(root / rel).st_mode)
    except OSError:
        return False


class _Rules:
    """A gitignore spec that remembers its answers. `status()` re-enumerates the
    workspace every few seconds (in the background, beside queries) and asks about
    the same paths each time: pathspec tries every pattern in turn (~60 with the
    default excludes and deny-list), four fifths of a status's time before."""

    __slots__ = ("spec", "_memo")
    LIMIT = 1 << 18

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self.spec = spec
        self._memo: dict[str, bool | None] = {}

    def check(self, path: str) -> bool | None:
        """`spec.check_file(path).include` (a directory's path ends with `/`)."""
        try:
            return self._memo[path]
        except KeyError:
            pass
        result = self.spec.check_file(path).include
        if len(self._memo) >= self.LIMIT:
            self._memo.clear()
        self._memo[path] = result
        return result

    def match_file(self, path: str) -> bool:
        return bool(self.check(path))


@functools.lru_cache(maxsize=16)
def _exclude_rules(patterns: tuple[str, ...]) -> _Rules:
    return _Rules(gitignore_spec(list(patterns)))


def exclude_spec(patterns: Sequence[str]) -> _Rules | None:
    """`index.exclude` (gitignore syntax, relative to the root) as one spec (made
    once per list of patterns, its answers remembered)."""
    return _exclude_rules(tuple(patterns)) if patterns else None


def deny_exclude_patterns(deny_paths: Sequence[str]) -> list[str]:
    """The policy's secret-location deny-list as gitignore patterns that match at any
    depth, as the policy matches them (`globs.unanchored`)."""
    return [unanchored(pattern) for pattern in deny_paths]


def take_snapshot(root: Path, exclude: Sequence[str] = ()) -> Snapshot:
    """Enumerate what the index should hold right now.

    `exclude` adds gitignore-style patterns on top of the repository's own
    rules (e.g. `node_modules/` in a workspace that is not a git repository).
    """
    spec = exclude_spec(exclude)
    snap = _git_snapshot(root) if in_git(root) else _walk_snapshot(root, spec)
    if spec is not None:
        if snap.git:
            snap.files = {p: f for p, f in snap.files.items() if not spec.match_file(p)}
        digest = hashlib.sha256(snap.ignore_rules_hash.encode())
        digest.update("\n".join(exclude).encode())
        snap.ignore_rules_hash = digest.hexdigest()
    return snap


def _git_snapshot(root: Path) -> Snapshot:
    head = _git(root, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    baseline = head.stdout.decode().strip() if head.returncode == 0 else None
    files: dict[str, SourceFile] = {}
    if baseline:
        # Without --full-tree, ls-tree lists (and names relative to) the cwd.
        for entry in _z(_git(root, "ls-tree", "-r", "-z", baseline).stdout):
            meta, path = entry.split("\t", 1)
            mode, kind, oid = meta.split()
            if kind == "blob" and mode != "120000" and not _excluded(path):
                files[path] = SourceFile(path, oid)
        changed = _z(_git(root, "diff", "--name-only", "--no-renames", "--relative", "-z", baseline).stdout)
        untracked = _z(_git(root, "ls-files", "-z", "--others", "--exclude-standard").stdout)
    else:  # a repository without commits: everything is overlay
        changed = []
        untracked = _z(_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout)
    for path in (*changed, *untracked):
        if _excluded(path):
            continue
        if _is_regular_file(root, path):
            files[path] = SourceFile(path, None)
        else:
            files.pop(path, None)
    ignore = hashlib.sha256()
    exclude = _git(root, "rev-parse", "--git-path", "info/exclude", check=False).stdout.decode().strip()
    if exclude and (root / exclude).is_file():
        ignore.update((root / exclude).read_bytes())
    for path, src in sorted(files.items()):
        if path.rsplit("/", 1)[-1] == ".gitignore":
            ident = src.oid or hashlib.sha256((root / path).read_bytes()).hexdigest()
            ignore.update(f"{path}\0{ident}\n".encode())
    return Snapshot(root, True, baseline, ignore.hexdigest(), dict(sorted(files.items())))


_Specs = list[tuple[str, _Rules]]
_gitignores: dict[tuple[str, str], _Rules] = {}  # (directory, .gitignore text) -> its rules


def _load_spec(directory: Path) -> _Rules | None:
    gitignore = directory / ".gitignore"
    if not gitignore.is_file():
        return None
    text = gitignore.read_text("utf-8", "replace")
    key = (str(directory), text)
    rules = _gitignores.get(key)
    if rules is None:
        if len(_gitignores) >= 4096:
            _gitignores.clear()
        rules = _gitignores[key] = _Rules(gitignore_spec(text.splitlines()))
    return rules


def _ignored_by(specs: _Specs, rel: str, is_dir: bool) -> bool:
    """Git semantics: the last matching rule wins, deeper `.gitignore` files last."""
    if not specs:
        return False
    verdict = None
    for base, spec in specs:
        sub = rel[len(base) + 1 :] if base else rel
        result = spec.check(sub + "/" if is_dir else sub)
        if result is not None:
            verdict = result
    return bool(verdict)


def _walk_snapshot(root: Path, exclude: _Rules | None = None) -> Snapshot:
    ignore = hashlib.sha256()
    files: dict[str, SourceFile] = {}
    stats: dict[str, tuple[int, int]] = {}
    root_str = str(root)
    pending: list[tuple[str, _Specs]] = [("", [("", exclude)] if exclude is not None else [])]
    while pending:
        rel_dir, specs = pending.pop()
        try:
            entries = sorted(os.scandir(os.path.join(root_str, rel_dir)), key=lambda e: e.name)
        except OSError:
            continue  # unreadable directory: its files are simply not part of the snapshot
        prefix = f"{rel_dir}/" if rel_dir else ""
        if any(e.name == ".gitignore" for e in entries):
            spec = _load_spec(Path(root_str, rel_dir))
            if spec is not None:
                ignore.update(f"{prefix}.gitignore\0".encode() + Path(root_str, rel_dir, ".gitignore").read_bytes())
                specs = [*specs, (rel_dir, spec)]
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                if not (not rel_dir and entry.name in ALWAYS_EXCLUDED_DIRS) and not _ignored_by(specs, rel, True):
                    pending.append((rel, specs))
            elif entry.is_file(follow_symlinks=False) and not _ignored_by(specs, rel, False) and not _excluded(rel):
                st = entry.stat(follow_symlinks=False)
                files[rel] = SourceFile(rel)
                stats[rel] = (st.st_mtime_ns, st.st_size)
    return Snapshot(root, False, None, ignore.hexdigest(), dict(sorted(files.items())), stats)


def resolve_paths(root: Path, paths: list[str], exclude: Sequence[str] = ()) -> dict[str, SourceFile | None]:
    """Where each of `paths` should come from now; None when it is gone or ignored.

    Used by incremental updates on save: cheaper than a full snapshot. Files are
    read from disk (the editor just saved them), never from the baseline commit.
    """
    rels = sorted({p.replace(os.sep, "/").lstrip("/") for p in paths})
    out: dict[str, SourceFile | None] = {p: None for p in rels}
    if not rels:
        return out
    if in_git(root):
        listed = set(
            _z(_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *rels).stdout)
        )
    else:
        listed = {p for p in rels if _walk_allows(root, p)}
    spec = exclude_spec(exclude)
    if spec is not None:
        listed = {p for p in listed if not spec.match_file(p)}
    for rel in rels:
        if rel in listed and not _excluded(rel) and _is_regular_file(root, rel):
            out[rel] = SourceFile(rel, None)
    return out


def _walk_allows(root: Path, rel: str) -> bool:
    """Whether the gitignore-aware walk would include `rel`."""
    parts = rel.split("/")
    if parts[0] in ALWAYS_EXCLUDED_DIRS:
        return False
    specs: _Specs = []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        if depth and _ignored_by(specs, base, True):
            return False  # an ignored directory hides everything below it
        spec = _load_spec(root / base if base else root)
        if spec is not None:
            specs.append((base, spec))
    return not _ignored_by(specs, rel, False)
