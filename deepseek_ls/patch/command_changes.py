"""What an approved command changed in the workspace, kept as a checkpoint so a rewind can take it out.

A patch names its files before it is applied; a command (`pytest`, `ruff --fix`, a script the person
approved) does not, and the OS sandbox lets it write anywhere in the workspace. So before a command
runs, `CommandWatch.before()` notes every workspace file's (size, mtime, inode) and keeps a copy of
each file's bytes it has not kept yet (`.deepseek/command-blobs/`, by sha256, shared by every
command, so a file unchanged since the last command is neither read nor copied again). After it,
`after()` walks again: the files created, changed or removed become one checkpoint
(`CheckpointStore`, meta `kind: "command"`, the session and the command) with what they held
before and what the command left, which the 3-way undo and the rewind take out like an apply.

Bounded: at most `max_files` files and files up to `max_bytes` are watched; the rest (and files that
are not UTF-8 text, which the checkpoint cannot merge) are named in `CommandChanges.unwatched`, never
dropped silently. Skipped: `.git/`, the state directory and the usual caches and environments.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache"})
MAX_FILES = 20_000
MAX_BYTES = 2 * 1024 * 1024

Stat = tuple[int, int, int]  # size, mtime_ns, inode


@dataclass
class CommandChanges:
    """What one command changed: `checkpoint_id` (None when nothing changed), the files, and what could
    not be watched (too many files, too large, not text), each with why."""

    checkpoint_id: str | None = None
    files: list[str] = field(default_factory=list)
    unwatched: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"checkpoint_id": self.checkpoint_id, "files": self.files, "unwatched": self.unwatched}


class CommandWatch:
    """Around one command: `before()` then `after(label, meta)`."""

    def __init__(self, root: Path, state_dir: Path, checkpoints, *, max_files: int = MAX_FILES,
                 max_bytes: int = MAX_BYTES) -> None:
        self.root = Path(root).resolve()
        self.state_dir = Path(state_dir).resolve()
        self.checkpoints = checkpoints
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.blobs = self.state_dir / "command-blobs"
        self._index_path = self.blobs / "index.json"
        self._lock = FileLock(str(self.state_dir / "command-blobs.lock"))
        self._before: dict[str, tuple[Stat, str | None]] = {}
        self._partial = False

    def _walk(self) -> tuple[dict[str, tuple[Stat, Path]], bool]:
        """Every regular file under the root (relative POSIX path -> stat, path), and whether the walk
        stopped at `max_files`."""
        found: dict[str, tuple[Stat, Path]] = {}
        skip = SKIP_DIRS | {self.state_dir.name}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if d not in skip and not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                path = Path(dirpath) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                if not path.is_file() or path.is_symlink():
                    continue
                if len(found) >= self.max_files:
                    return found, True
                found[path.relative_to(self.root).as_posix()] = ((st.st_size, st.st_mtime_ns, st.st_ino), path)
        return found, False

    def before(self) -> None:
        """Note every file and keep the bytes of those not kept yet (unchanged since the last command:
        neither read nor copied)."""
        with self._lock:
            index = self._load_index()
            files, self._partial = self._walk()
            self._before = {}
            for rel, (st, path) in files.items():
                known = index.get(rel)
                if known is not None and tuple(known[0]) == st and (known[1] is None or (self.blobs / known[1]).is_file()):
                    self._before[rel] = (st, known[1])
                    continue
                digest = self._keep(path, st)
                self._before[rel] = (st, digest)
                index[rel] = [list(st), digest]
            self._save_index({rel: [list(st), d] for rel, (st, d) in self._before.items()})

    def _keep(self, path: Path, st: Stat) -> str | None:
        """Copy the file's bytes into the blob store; its sha256, None when too large or unreadable."""
        if st[0] > self.max_bytes:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(data).hexdigest()
        blob = self.blobs / digest
        if not blob.is_file():
            blob.parent.mkdir(parents=True, exist_ok=True)
            tmp = blob.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, blob)
        return digest

    def after(self, label: str, meta: dict) -> CommandChanges:
        """The files the command created, changed or removed, as one checkpoint (before / after)."""
        out = CommandChanges()
        with self._lock:
            files, partial = self._walk()
            if partial or self._partial:
                out.unwatched.append(f"more than {self.max_files} files in the workspace: only the first "
                                     f"{self.max_files} are watched")
            changed = sorted(
                [rel for rel, (st, _) in files.items() if rel not in self._before or self._before[rel][0] != st]
                + [rel for rel in self._before if rel not in files]
            )
            befores: dict[str, str | None] = {}
            for rel in changed:
                if rel in self._before:
                    digest = self._before[rel][1]
                    text = self._text(digest)
                    if text is None:
                        why = "larger than the watch limit" if digest is None else "not UTF-8 text"
                        out.unwatched.append(f"{rel}: {why}, so the change the command made to it cannot be taken out")
                        continue
                    if rel in files and self._digest_of(files[rel][1]) == digest:
                        continue  # touched, same bytes
                    befores[rel] = text
                else:
                    befores[rel] = None  # created by the command
            if befores:
                names = sorted(befores)
                out.checkpoint_id = self.checkpoints.create(names, label=label, meta=meta, texts=befores)
                self.checkpoints.record_after(out.checkpoint_id, names)
                out.files = names
            # What the command left is the next command's "before".
            index = {rel: [list(st), d] for rel, (st, d) in self._before.items() if rel in files}
            for rel in changed:
                if rel in files:
                    st, path = files[rel]
                    index[rel] = [list(st), self._keep(path, st)]
            self._save_index(index)
        return out

    def _digest_of(self, path: Path) -> str | None:
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            return None

    def _text(self, digest: str | None) -> str | None:
        if digest is None:
            return None
        try:
            return (self.blobs / digest).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _load_index(self) -> dict[str, list]:
        try:
            data = json.loads(self._index_path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_index(self, index: dict[str, list]) -> None:
        self.blobs.mkdir(parents=True, exist_ok=True)
        tmp = self._index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(index), encoding="utf-8")
        os.replace(tmp, self._index_path)
        self._collect(index)

    def _collect(self, index: dict[str, list]) -> None:
        """Remove blobs no file's last state names (a checkpoint keeps its own copy)."""
        live = {entry[1] for entry in index.values() if entry[1]}
        for blob in self.blobs.iterdir():
            if blob.name not in live and len(blob.name) == 64:
                try:
                    blob.unlink()
                except OSError:
                    pass


async def watched(patches, command: str, session_id: str | None, sink, run):
    """Run `await run()` watched (`patches`: the `PatchStore` whose checkpoints keep the change; None:
    not watched). Records `CommandChanged@v1` on `sink` when the command changed files or could not
    be fully watched; returns what `run()` returned."""
    import asyncio

    if patches is None:
        return await run()
    store = patches.checkpoints
    watch = CommandWatch(store.root, store.dir.parent, store)
    await asyncio.to_thread(watch.before)
    try:
        return await run()
    finally:
        meta = {"kind": "command", "command": command, "session_id": session_id or ""}
        changes = await asyncio.to_thread(watch.after, f"command: {command}", meta)
        if changes.files or changes.unwatched:
            sink.emit("CommandChanged@v1", {"command": command, **changes.to_json()})
