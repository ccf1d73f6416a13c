"""A tantivy writer kept open between one-file updates (saves come in bursts).

Opening a writer per update made every ~8th save wait for the whole-index
merge tantivy's merge policy starts below 10,000 documents: only one writer
may exist, so the next update had to wait for the previous one's merges. A
writer kept open commits while its merges run in the background.

The session owns the cross-process write lock for as long as it lives, so it
closes itself `linger` seconds after its last use, or `max_hold` seconds after
it opened even when saves keep coming (another process may be waiting for the
lock). Closing waits for the merges and hands the writer to `on_close`, which
records the files they left and releases the lock.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import tantivy

from .manifest import Manifest

WRITER_LINGER_SECONDS = 1.0
WRITER_MAX_HOLD_SECONDS = 10.0


class WriterSession:
    def __init__(
        self,
        writer: tantivy.IndexWriter,
        generation: str,
        on_close: Callable[["WriterSession"], None],
        *,
        linger: float = WRITER_LINGER_SECONDS,
        max_hold: float = WRITER_MAX_HOLD_SECONDS,
    ) -> None:
        self.writer = writer
        self.generation = generation
        self.manifest: Manifest | None = None  # the last manifest committed through this writer
        self.broken = False  # an update failed half-way: roll back before closing
        self.closed = threading.Event()
        self._on_close = on_close
        self._linger, self._max_hold = linger, max_hold
        self._started = self._last_used = time.monotonic()
        self._in_use = True  # the update that opened it is using it
        self._closing = False
        self._lock = threading.Lock()
        self._wake = threading.Event()
        # Not a daemon: an exiting process waits for the merges and leaves a tidy index.
        threading.Thread(target=self._run, name="deepseek-index-writer", daemon=False).start()

    def claim(self) -> bool:
        """Take the writer for one more update; False when it is closing (or must)."""
        with self._lock:
            if self._closing or self.broken or time.monotonic() - self._started >= self._max_hold:
                return False
            self._in_use = True
            return True

    def release(self, manifest: Manifest | None, *, broken: bool = False) -> None:
        """The update is done; `manifest` is what it committed (None: nothing)."""
        with self._lock:
            self._in_use = False
            if manifest is not None:
                self.manifest = manifest
            self.broken |= broken
            self._last_used = time.monotonic()
        self._wake.set()

    def close(self, timeout: float | None = None) -> bool:
        """Close as soon as no update uses it; True once closed within `timeout`."""
        with self._lock:
            self._closing = True
        self._wake.set()
        return self.closed.wait(timeout)

    def _due(self) -> bool:
        now = time.monotonic()
        return (
            self._closing or self.broken or now - self._last_used >= self._linger
            or now - self._started >= self._max_hold
        )

    def _run(self) -> None:
        while True:
            self._wake.wait(self._linger)
            with self._lock:
                self._wake.clear()
                if self._in_use or not self._due():
                    continue
                self._closing = True
            break
        try:
            self._on_close(self)
        finally:
            self.writer = None  # type: ignore[assignment]
            self.closed.set()
