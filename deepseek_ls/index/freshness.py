"""Compare the workspace with the manifest: fresh, stale (and what changed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from .analyse import sha256_hex
from .filestate import FileStateCache
from .reader import ContentReader, FileBytes, disk_stat
from .sources import Snapshot

ChangeKind = Literal["modified", "added", "deleted"]
IndexState = Literal["fresh", "stale", "corrupt", "missing"]


class ChangedPath(BaseModel):
    path: str
    change: ChangeKind


class IndexStatus(BaseModel):
    """What `index status` reports. `changed` lists exactly the paths that differ."""

    state: IndexState
    changed: list[ChangedPath] = Field(default_factory=list)
    reason: str = ""  # why corrupt / missing
    baseline_commit: str | None = None
    files: int = 0
    built_at: str | None = None


@dataclass
class WorkspaceState:
    """sha256 of every file in a snapshot, plus the bytes we had to read anyway."""

    hashes: dict[str, str] = field(default_factory=dict)
    read: dict[str, FileBytes] = field(default_factory=dict)


def hash_snapshot(
    snapshot: Snapshot, cache: FileStateCache, reader: ContentReader, indexed: dict[str, str] | None = None
) -> WorkspaceState:
    """Hash every file of `snapshot`, reading only files the cache cannot vouch for.

    With `indexed` (path → sha256 in the index), the bytes of files that differ
    from it are kept in `read`, so an update need not read them twice; other
    bytes are dropped at once (a cold cache must not hold the repo in memory).
    """
    state = WorkspaceState()
    for path, src in snapshot.files.items():
        if src.oid is not None:
            known = cache.for_blob(path, src.oid)
        else:
            st = snapshot.stats.get(path) or disk_stat(snapshot.root / path)
            known = cache.for_disk(path, *st) if st else None
        if known is not None:
            state.hashes[path] = known
            continue
        content = reader.read(src)
        if content is None:  # vanished since the snapshot
            continue
        digest = sha256_hex(content.data)
        cache.record(path, digest, oid=src.oid, mtime_ns=content.mtime_ns, size=content.size)
        state.hashes[path] = digest
        if indexed is not None and indexed.get(path) != digest:
            state.read[path] = content
    return state


def diff(indexed: dict[str, str], current: dict[str, str]) -> list[ChangedPath]:
    """Changes from `indexed` to `current`, in path order. A rename is a delete plus an add."""
    out: list[ChangedPath] = []
    for path in sorted(indexed.keys() | current.keys()):
        old, new = indexed.get(path), current.get(path)
        if old == new:
            continue
        change: ChangeKind = "added" if old is None else "deleted" if new is None else "modified"
        out.append(ChangedPath(path=path, change=change))
    return out
