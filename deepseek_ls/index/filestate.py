"""A cache of sha256 by file identity, so `status()` rehashes only what changed.

Keyed by path: a git blob id, or a disk file's (mtime_ns, size) — the same trick
as git's index. A disk entry whose mtime is too close to "now" is not trusted
later ("racily clean": it could change again within the clock's granularity
without its stat changing), so it is rehashed next time. The cache is only an
accelerator: losing or corrupting it costs time, never correctness.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from .manifest import write_text_atomic

_RACY_NS = 2_000_000_000


class FileStateCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, list] = {}  # path -> [oid|None, mtime_ns|None, size|None, sha256]
        self._dirty = False
        self._lock = threading.Lock()  # status() in a query thread vs update() in another
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(raw, dict):
                self._entries = {k: v for k, v in raw.items() if isinstance(v, list) and len(v) == 4}
        except (OSError, ValueError):
            self._entries = {}

    def for_blob(self, path: str, oid: str) -> str | None:
        entry = self._entries.get(path)
        return entry[3] if entry and entry[0] == oid else None

    def for_disk(self, path: str, mtime_ns: int, size: int) -> str | None:
        entry = self._entries.get(path)
        if entry and entry[1] == mtime_ns and entry[2] == size and time.time_ns() - mtime_ns > _RACY_NS:
            return entry[3]
        return None

    def record(
        self, path: str, sha256: str, *, oid: str | None = None, mtime_ns: int | None = None,
        size: int | None = None,
    ) -> None:
        new = [oid, mtime_ns, size, sha256]
        with self._lock:
            if self._entries.get(path) != new:
                self._entries[path] = new
                self._dirty = True

    def forget_except(self, keep: set[str]) -> None:
        with self._lock:
            for path in [p for p in self._entries if p not in keep]:
                del self._entries[path]
                self._dirty = True

    def save(self) -> None:
        with self._lock:
            if not self._dirty:
                return
            text = json.dumps(self._entries, separators=(",", ":"))
            self._dirty = False
        write_text_atomic(self.path, text)
