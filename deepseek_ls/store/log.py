"""`EventLog`: one session's append-only `events.jsonl`, durable and safe across processes.

- An append is acknowledged (returns) only after the line is written and
  `fdatasync`-ed. The writing is done by the process's group-commit writer
  thread (`store/writer.py`): `submit` queues an event and returns a future that
  resolves once its batch is synced; `append` waits for it. Events queued
  together share one `write` and one `fdatasync`.
- Appends take an exclusive `flock` on the log file (plus a thread lock), and the
  next `seq_no` is recomputed from the file's last line under that lock, so two
  processes never interleave partial lines or reuse a seq_no.
- A torn last line (a write cut short by a crash: no trailing newline, or not
  JSON) is cut off when found, and the cut bytes are kept beside the log in
  ``events.jsonl.torn-<timestamp>``. Nothing else is ever removed.
- Payloads are validated against their kind's model and passed through
  `policy.redact.redact_obj` before they are written.
- Each line ends with a mac chaining it to the line before (`store/chain.py`), so the
  session's seal (`store/provenance.py`) covers the whole log; readers drop the field.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import weakref
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from pydantic import ValidationError
from pydantic_core import from_json

from deepseek_ls.store import chain, seal
from deepseek_ls.store.writer import writer

if TYPE_CHECKING:
    from deepseek_ls.store.events import Event

# The event models (store/events.py: pydantic, every kind) load on the first append or read(): listing
# sessions (projections from raw lines) never needs them (`deepseek-ls sessions` start-up).

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
_decode = json.JSONDecoder().decode


class EventLogError(Exception):
    """The log could not be read or written; the message says which file and why."""

    @property
    def user_message(self) -> str:
        return str(self)


class InvalidEvent(EventLogError, ValueError):
    """An event was refused before anything was written (unknown kind, bad payload)."""


class SessionNotFound(EventLogError, LookupError):
    """No session with that id (or id prefix) in this workspace."""


class CorruptLog(EventLogError):
    """A line other than a torn last line is not a valid event: the file needs a human."""


def utc_now() -> str:
    """Event timestamp: UTC, ISO 8601 with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_line(line: bytes, path: Path, line_no: int) -> dict[str, Any]:
    """Decode one complete line of a log; `CorruptLog` names the file and line when it is not an event."""
    try:
        # pydantic-core's parser reads a line in about half json's time (projection rebuilds read
        # every line). It gives the same objects; a line it refuses (not JSON, not UTF-8, or a lone
        # surrogate escape, which only json reads) goes to json, whose answer and errors stand.
        obj = from_json(line)
    except ValueError:
        try:
            obj = _decode(line.decode("utf-8"))
        except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise CorruptLog(f"{path}:{line_no}: not a JSON event ({error})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("seq_no"), int) or "kind" not in obj:
        raise CorruptLog(f"{path}:{line_no}: not an event envelope")
    obj.pop("mac", None)  # the chain's (store/chain.py), checked by provenance, not part of the event
    return obj


class EventLog:
    """The event log of one session. Also an `EventSink` (`emit`)."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        *,
        durable: bool = True,
        redact_obj: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.session_id = session_id
        self._durable = durable
        self._redact = redact_obj or _policy_redaction()
        self._thread_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        # A log dropped without close() still gives its descriptor back.
        self._close_fd = weakref.finalize(self, os.close, self._fd)
        if created and durable:
            _fsync_dir(self.path.parent)
        self._size = -1  # file size after our last look at the tail; -1 = unknown
        self._last_future: Future[Event] | None = None
        self._last_seq = 0
        self._chain = ""  # the mac the next line chains from (store/chain.py); set by _check_tail
        self._mac_key: bytes | None = None  # the user's key, looked up on the first write (a path lookup)
        with self._locked():
            self._check_tail()

    # -- writing ---------------------------------------------------------------

    def append(self, kind: str, payload: Mapping[str, Any]) -> Event:
        """Validate, redact and durably append one event; return it with its seq_no."""
        return self.submit(kind, payload)[1].result()

    def submit(self, kind: str, payload: Mapping[str, Any]) -> tuple[dict[str, Any], Future[Event]]:
        """Validate and redact now (`InvalidEvent` is raised here, nothing queued), queue the
        write; return the payload as it will be stored and a future for the stored event,
        resolved once it is written and `fdatasync`-ed (or failed with `EventLogError`).
        Events submitted from one thread are stored in submission order."""
        clean = self._prepare(kind, payload)
        try:
            body = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError as error:  # NaN / Infinity: not JSON, and never equal on replay
            raise InvalidEvent(f"invalid {kind} payload: {error}") from None
        future = writer().submit(self, kind, (body, clean))
        self._last_future = future
        return clean, future

    def _write_batch(self, items: list[tuple[str, tuple[str, dict[str, Any]]]]) -> list[Event]:
        """Writer thread: append `items` with one write and one fdatasync, under the lock."""
        from deepseek_ls.store.events import Event  # loaded by _prepare already

        with self._locked():
            self._check_tail()
            seq_no = self._last_seq
            prev = self._chain
            if self._mac_key is None:
                self._mac_key = seal.key()
            key = self._mac_key
            lines: list[bytes] = []
            events: list[Event] = []
            for kind, (body, clean) in items:
                seq_no += 1
                ts = utc_now()
                line, prev = chain.chained(key, prev, (
                    f'{{"seq_no":{seq_no},"ts":"{ts}","session_id":{json.dumps(self.session_id)},'
                    f'"kind":{json.dumps(kind)},"payload":{body}'.encode("utf-8")
                ))
                lines.append(line)
                events.append(
                    Event.model_construct(seq_no=seq_no, ts=ts, session_id=self.session_id, kind=kind, payload=clean)
                )
            data = b"".join(lines)
            self._write(data)
            self._last_seq = seq_no
            self._chain = prev
            self._size += len(data)
        return events

    def flush(self) -> None:
        """Wait until every event submitted so far is durable (errors are the submitters')."""
        future = self._last_future
        if future is not None:
            try:
                future.result()
            except Exception:  # noqa: BLE001 - reported to whoever submitted it
                pass

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        """`EventSink.emit`: append and forget the returned event."""
        self.append(kind, payload)

    def _prepare(self, kind: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        from deepseek_ls.store.events import UnknownEventKind, validate_payload

        try:
            clean = validate_payload(kind, dict(payload))
        except UnknownEventKind as error:
            raise InvalidEvent(str(error)) from None
        except ValidationError as error:
            raise InvalidEvent(f"invalid {kind} payload: {error}") from None
        return self._redact(clean)

    def _write(self, line: bytes) -> None:
        view = memoryview(line)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self._durable:
                os.fdatasync(self._fd)
        except OSError as error:
            # Leave no partial line behind (e.g. disk full): back to the last good size.
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise EventLogError(f"{self.path}: append failed: {error.strerror or error}") from error

    # -- reading ---------------------------------------------------------------

    def read(self) -> list[Event]:
        """Every event in the log, in order (a torn tail is repaired first)."""
        with self._locked():
            self._check_tail()
            data = os.pread(self._fd, self._size, 0) if self._size else b""
        from deepseek_ls.store.events import Event

        return [
            Event.model_validate(parse_line(line, self.path, n))
            for n, line in enumerate(data.splitlines(), start=1)
        ]

    @property
    def last_seq(self) -> int:
        with self._locked():
            self._check_tail()
            return self._last_seq

    # -- the tail ----------------------------------------------------------------

    def _check_tail(self) -> None:
        """Learn the last seq_no; cut a torn last line. Call with the lock held."""
        size = os.fstat(self._fd).st_size
        if size == self._size:
            return  # nobody wrote since our last append: _last_seq is current
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            size = self._cut_from(self._line_start(size), size, "no trailing newline")
        self._last_seq = 0
        if size:
            start = self._line_start(size - 1)
            line = os.pread(self._fd, size - start, start)
            try:
                self._last_seq = parse_line(line, self.path, -1)["seq_no"]
            except CorruptLog:
                # A complete-looking but invalid last line (e.g. zeros after a power
                # loss) was never acknowledged; cut it once. Damage further up is not
                # ours to repair.
                size = self._cut_from(start, size, "last line is not a JSON event")
                if size:
                    start = self._line_start(size - 1)
                    line = os.pread(self._fd, size - start, start)
                    self._last_seq = parse_line(line, self.path, -1)["seq_no"]
        if size:
            parts = chain.split(line)
            # A last line without a mac (a log from before the chain): hash it all, once per open.
            self._chain = parts[1] if parts else chain.head(os.pread(self._fd, size, 0))
        else:
            self._chain = chain.head(b"")
        self._size = size

    def _line_start(self, end: int) -> int:
        """Offset just after the last newline before `end` (0 if none)."""
        pos = end
        while pos > 0:
            start = max(0, pos - _CHUNK)
            chunk = os.pread(self._fd, pos - start, start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                return start + i + 1
            pos = start
        return 0

    def _cut_from(self, start: int, end: int, why: str) -> int:
        torn = os.pread(self._fd, end - start, start)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.torn-{stamp}-{os.getpid()}")
        with open(aside, "wb") as fh:
            fh.write(torn)
            fh.flush()
            os.fsync(fh.fileno())
        os.ftruncate(self._fd, start)
        os.fsync(self._fd)
        log.warning("%s: cut a torn last line (%s, %d bytes) -> %s", self.path, why, len(torn), aside)
        return start

    # -- locking and lifetime ----------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # flock excludes other processes (and other EventLog objects); the thread
        # lock excludes threads sharing this object, which flock would not.
        with self._thread_lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self.flush()
        self._close_fd()
        self._fd = -1

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EventLog({str(self.path)!r}, {self.session_id!r})"


def _policy_redaction() -> Callable[[Any], Any]:
    # Imported when a log is opened for writing, not when the module is: readers
    # (projections, `sessions`) do not need the secret detectors.
    from deepseek_ls.policy.redact import redact_obj

    return redact_obj


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
