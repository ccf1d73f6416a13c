"""Several patterns found in one pass over bytes, by Hyperscan when it is installed.

The index looks at every byte of every file it reads: for the secret-file gates and
for where Python definitions and triple-quoted strings can start. A Python substring
test or regex is a pass over the text each; Hyperscan matches all the patterns of a
database in one vectorised pass. Its wheels are x86_64 Linux only, so every user of
this module keeps a pure-Python path giving the same results (`compile` answers None
where Hyperscan cannot run), and tests check that the two agree.

Matches are reported in order of their end offset; a match's `to` is the offset just
after it. A scratch space per thread: scans from several threads may overlap.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)

# on_match(pattern_id, start, to, flags, context); a true result stops the scan.
OnMatch = Callable[[int, int, int, int, Any], "bool | None"]


class MultiScan:
    def __init__(self, module: Any, database: Any) -> None:
        self._module = module
        self._db = database
        self._local = threading.local()

    @classmethod
    def compile(cls, patterns: list[tuple[bytes, int, int]], *, what: str) -> "MultiScan | None":
        """`patterns`: (expression, id, Hyperscan flags); `flags` may use the names in
        `FLAGS`. None when Hyperscan is not installed or cannot run here (logged once
        per database, as `what`)."""
        try:
            import hyperscan

            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(
                expressions=[expression for expression, _, _ in patterns],
                ids=[pattern_id for _, pattern_id, _ in patterns],
                flags=[flags for _, _, flags in patterns],
            )
        except Exception as exc:  # not installed, or this CPU lacks what it needs
            log.debug("%s without Hyperscan: %s", what, exc)
            return None
        return cls(hyperscan, database)

    def scan(self, data: bytes, on_match: OnMatch, context: Any = None) -> None:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._module.Scratch(self._db)
        self._db.scan(data, match_event_handler=on_match, context=context, scratch=scratch)


# Hyperscan's flag values (hyperscan.HS_FLAG_*), so callers can build pattern lists
# without importing it.
CASELESS = 1
SINGLEMATCH = 8


class Lazy:
    """A database compiled on first use (a command-line start does not pay for it),
    or None for good when Hyperscan is unavailable."""

    def __init__(self, patterns: Callable[[], list[tuple[bytes, int, int]]], *, what: str) -> None:
        self._patterns = patterns
        self._what = what
        self._built: list[MultiScan | None] = []
        self._lock = threading.Lock()

    def get(self) -> MultiScan | None:
        if not self._built:
            with self._lock:
                if not self._built:
                    self._built.append(MultiScan.compile(self._patterns(), what=self._what))
        return self._built[0]

    def disabled(self) -> "_Disabled":
        """`with db.disabled():` - the pure-Python path, as on a machine without Hyperscan (tests)."""
        return _Disabled(self)


class _Disabled:
    def __init__(self, lazy: Lazy) -> None:
        self._lazy = lazy
        self._saved: list[MultiScan | None] = []

    def __enter__(self) -> None:
        self._lazy.get()
        self._saved = self._lazy._built[:]
        self._lazy._built[:] = [None]

    def __exit__(self, *exc: object) -> None:
        self._lazy._built[:] = self._saved
