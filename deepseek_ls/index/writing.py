"""Who may write the index, and when: the write locks and the kept-open writer.

One writer at a time: `_writing` (in this process, for the length of one build
or update) then `write.lock` (across processes, filelock). Updates keep their
tantivy writer open in a `WriterSession`, which holds `write.lock` until it
closes itself shortly after the last save (see writer_session.py); a build,
`wait_idle` or an update that cannot reuse it closes it first. `CodeIndex`
inherits this; it provides `dir`, `_adopt`, `_filestate` and the open state.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock, Timeout

from .storage import new_writer, open_index, settle
from .writer_session import WriterSession

log = logging.getLogger(__name__)

LOCK_TIMEOUT_SECONDS = 60.0


class IndexBusy(RuntimeError):
    """Another process holds the index's write lock for too long."""


class IndexWriting:
    dir: Path
    lock_timeout: float
    writer_linger: float
    writer_max_hold: float
    _write_lock: FileLock
    _writing: threading.Lock
    _session: WriterSession | None
    _session_lock: threading.Lock
    _open: Any
    _fresh: Any

    def _wait_for_writers(self) -> bool:
        """True if a writer was in flight (and has now finished)."""
        busy = self._writing.locked() or self._session is not None
        if busy:
            self.wait_idle(self.lock_timeout)
        probe = FileLock(str(self.dir / "write.lock"), thread_local=False)
        try:
            probe.acquire(timeout=0)
        except Timeout:
            busy = True
            try:
                probe.acquire(timeout=self.lock_timeout)
            except Timeout:
                return True  # still busy: let the caller look again anyway
        probe.release()
        return busy

    def _lock_file(self) -> None:
        try:
            self._write_lock.acquire(timeout=self.lock_timeout)
        except Timeout:
            raise IndexBusy(
                f"another process has been writing the index for over {self.lock_timeout:.0f}s "
                f"({self.dir / 'write.lock'})"
            ) from None

    def _take_writing(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self._writing.acquire(timeout=self.lock_timeout):
            raise IndexBusy(f"this process has been writing the index for over {self.lock_timeout:.0f}s")

    def _claim_session(self) -> WriterSession | None:
        """With `_writing` held: the open session for one more update, else None
        (after waiting for a closing one to let go of the lock)."""
        with self._session_lock:
            session = self._session
        if session is None or session.claim():
            return session
        if not session.close(self.lock_timeout):
            raise IndexBusy(f"the index writer has been closing for over {self.lock_timeout:.0f}s")
        return None

    def _begin_write(self) -> None:
        self._take_writing()
        try:
            if not self._close_current_session():
                raise IndexBusy(f"the index writer has been closing for over {self.lock_timeout:.0f}s")
            self._lock_file()
        except BaseException:
            self._writing.release()
            raise

    def _close_current_session(self) -> bool:
        with self._session_lock:
            session = self._session
        return session is None or session.close(self.lock_timeout)

    def _end_write(self) -> None:
        self._write_lock.release()
        self._writing.release()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the write locks for the block."""
        self._begin_write()
        try:
            yield
        finally:
            self._end_write()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no write of this instance is in flight, closing the kept-open
        writer (its background merges included). True when idle. Call before
        exiting to leave a tidy index."""
        if not self._writing.acquire(timeout=-1 if timeout is None else timeout):
            return False
        try:
            with self._session_lock:
                session = self._session
            return session is None or session.close(timeout)
        finally:
            self._writing.release()

    def _open_session(self, gen_dir: Path) -> WriterSession:
        session = WriterSession(
            new_writer(open_index(gen_dir)), gen_dir.name, self._close_session,
            linger=self.writer_linger, max_hold=self.writer_max_hold,
        )
        with self._session_lock:
            self._session = session
        return session

    def _close_session(self, session: WriterSession) -> None:
        """In the session's thread: wait for the merges, record the files they left, release the lock."""
        writer = session.writer
        try:
            if session.broken:
                writer.rollback()  # drop a failed update's uncommitted changes
            if session.manifest is None:
                writer.wait_merging_threads()
                return
            current = self._open
            base = session.manifest
            if current is not None and current.manifest.storage.generation == session.generation:
                base = current.manifest  # may be newer (an update that changed nothing but the baseline)
            storage = settle(writer, self.dir / session.generation, base.storage)
            if storage != base.storage:
                self._adopt(
                    base.model_copy(update={"storage": storage}),
                    current.index if current is not None else None,
                    fresh=self._fresh,
                )
        except Exception:  # noqa: BLE001 - the next open sees the mismatch and rebuilds
            log.exception("closing the index writer failed")
        finally:
            # Drop the writer (and tantivy's own lock) before another process may take write.lock.
            session.writer = writer = None  # type: ignore[assignment]
            try:
                self._filestate().save()
            except OSError as exc:
                log.warning("index file-state cache not saved: %s", exc)
            with self._session_lock:
                if self._session is session:
                    self._session = None
            self._write_lock.release()
