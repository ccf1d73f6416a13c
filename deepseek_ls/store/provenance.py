"""Whose session is this: a sealed marker beside each event log.

A repository can commit `.deepseek/sessions/<id>/events.jsonl` (and `.deepseek/state.db`),
and in a fresh clone those logs would be listed, replayed and resumed as the person's own
history. So when a session is created, once its first event (`SessionCreated@v1`) is
durable, a marker `session.seal` is written beside the log, sealed with the per-user key of
`store/seal.py`: the session id, the log's path relative to the state dir, the workspace
(`seal.workspace_id`) and the length and sha256 of the log's beginning it covers (the first
line). Every later line carries a mac chained from there (`store/chain.py`), so the seal
covers the whole log. A session is ours when its marker verifies here and its log's chain
is unbroken; any other session directory is ignored, with the reason `why_not_ours` gives.
A check that found a long stretch of chain unbroken leaves `session.checked` beside the
marker (sealed too): a later process starts from the prefix it names when the log still
begins with exactly those bytes, and checks every line when the record does not hold.

What it covers: logs a repository (or another user or machine) ships, a marker copied to
another session id or another workspace, a log swapped under a marker, lines inserted,
changed or removed in the middle of a log. A torn last line (a crash mid-write) is not a
break: the log's own repair cuts it. Not covered: lines cut from the end of a log (it then
reads as a shorter history of ours), and lines appended by a program that does not chain them
(the session then reads as altered).

Sessions sealed before markers named the workspace and covered the whole log (version 1:
first line only) are the person's own: on first open in the workspace their first event
names, the marker is rewritten for this version, covering the log as it is. Anything else
the person knows to be theirs (a session from before seals, a project that was moved) they
vouch for with `adopt` (`deepseek-ls sessions --adopt ID`), which seals it as it is and
records the adoption in the audit file beside the key (`seal.record_adoption`).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.store import chain, seal
from deepseek_ls.store.log import CorruptLog, SessionNotFound, parse_line

MARKER_NAME = "session.seal"
CHECKED_NAME = "session.checked"  # how far an earlier check found the chain unbroken (sealed too)
LOG_NAME = "events.jsonl"
_KIND = "deepseek-ls session"
_CHECKED_KIND = "deepseek-ls session check"
_VERSION = 2
_MARKER_MAX = 4096
_verdicts: dict[tuple, str | None] = {}

log = logging.getLogger(__name__)


class NotOurSession(SessionNotFound):
    """The session exists in the workspace but this user's deepseek-ls did not write it."""


class CannotAdopt(SessionNotFound):
    """The person asked to adopt a session that is damaged, already theirs, or not a session."""


def not_ours(session_id: str, why: str) -> NotOurSession:
    return NotOurSession(
        f"session {session_id} was not written by you: {why}. It is ignored: never listed, "
        f"replayed or resumed as yours. {adopt_hint(session_id)}"
    )


def adopt_hint(session_id: str) -> str:
    """What the person can do about an ignored session they know to be theirs."""
    return (f"If it is yours (made before deepseek-ls sealed sessions, or this project was moved), "
            f"`deepseek-ls sessions --adopt {session_id}` shows it and makes it yours")


def _log_rel(session_id: str) -> str:
    return f"sessions/{session_id}/{LOG_NAME}"


def _workspace(session_dir: Path) -> str:
    # <root>/.deepseek/sessions/<id>: the root as given, resolved (a symlinked .deepseek or
    # session directory does not make another workspace's records ours here).
    return seal.workspace_id(Path(session_dir).absolute().parent.parent.parent)


def _read_log(log_path: Path) -> bytes | None:
    try:
        fd = os.open(log_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        # The whole file in one read (then one that finds its end): joined chunks would be a
        # second copy of a log a rebuild reads in full.
        chunks = []
        while chunk := os.read(fd, max(st.st_size, 1 << 20)):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_marker(path: Path) -> str:
    # A repository can ship a symlink named session.seal (to /dev/zero, a FIFO, a huge file):
    # never follow it, never block on it, never read more than a marker can hold.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        data = os.read(fd, _MARKER_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > _MARKER_MAX:
        raise OSError(f"{path.name} is larger than a marker")
    return data.decode("utf-8")


def _write_marker(session_dir: Path, record: dict, durable: bool, name: str = MARKER_NAME) -> None:
    tmp = session_dir / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(seal.sealed(record), sort_keys=True))
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, session_dir / name)
    if durable:
        fd = os.open(session_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _marker(session_id: str, workspace: str, covered: bytes, **extra: object) -> dict:
    return {"kind": _KIND, "version": _VERSION, "session_id": session_id, "path": _log_rel(session_id),
            "workspace": workspace, "covered_bytes": len(covered), "covered_sha256": seal.digest(covered),
            **extra}


def seal_session(session_dir: Path, session_id: str, *, durable: bool = True) -> None:
    """Write the sealed marker of a session whose first event is already in its log."""
    data = _read_log(session_dir / LOG_NAME) or b""
    newline = data.find(b"\n")
    if newline < 0:
        raise OSError(f"{session_dir / LOG_NAME} has no complete first event to seal")
    _write_marker(session_dir, _marker(session_id, _workspace(session_dir), data[:newline + 1]), durable)


def why_not_ours(session_dir: Path, session_id: str) -> str | None:
    """None when the session in `session_dir` was created by this user's deepseek-ls in this
    workspace and its log is the one it wrote (torn last line aside); else why not, in words
    for a log line or the person. A version-1 marker of ours is migrated here."""
    session_dir = Path(session_dir)
    try:
        key = (str(session_dir.absolute()), seal.key(),
               *_stamp(session_dir / MARKER_NAME), *_stamp(session_dir / LOG_NAME))
    except OSError:
        key = None
    if key is not None and key in _verdicts:
        return _verdicts[key]
    why = _why_not_ours(session_dir, session_id)
    if key is not None:
        if len(_verdicts) > 4096:
            _verdicts.clear()
        _verdicts[key] = why
    return why


def _stamp(path: Path) -> tuple[int, int, int, int]:
    st = os.lstat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _why_not_ours(session_dir: Path, session_id: str) -> str | None:
    try:
        raw = _read_marker(session_dir / MARKER_NAME)
    except FileNotFoundError:
        return (f"it has no {MARKER_NAME} (shipped with the repository, copied from elsewhere, "
                "or made before deepseek-ls sealed its sessions)")
    except (OSError, UnicodeDecodeError) as exc:
        return f"its {MARKER_NAME} cannot be read ({exc})"
    try:
        record = json.loads(raw)
    except ValueError:
        return f"its {MARKER_NAME} is not JSON"
    workspace = _workspace(session_dir)
    why = seal.why_not_ours(record, "session_id", session_id, workspace)
    if why is not None:
        return why
    if record.get("kind") != _KIND or record.get("path") != _log_rel(session_id):
        return f"its seal names {record.get('path')!r}, not {_log_rel(session_id)!r}"
    data = _read_log(session_dir / LOG_NAME)
    if data is None:
        return f"its {LOG_NAME} cannot be read as a regular file"
    if record.get("version") != _VERSION:
        return _migrate_v1(session_dir, session_id, record, data, workspace)
    covered = record.get("covered_bytes")
    if (not isinstance(covered, int) or isinstance(covered, bool) or not 0 < covered <= len(data)
            or seal.digest(data[:covered]) != record.get("covered_sha256")):
        return "its event log is not the one that was sealed (its beginning differs)"
    start = _checked_until(session_dir, session_id, workspace, record, data) or covered
    broken = chain.first_break(seal.key(), data, start)
    end = _complete(data)
    if broken is not None:
        pos, line = broken
        if pos + len(line) != end or _is_event(line):
            line_no = data.count(b"\n", 0, pos) + 1
            return (f"its event log was altered after it was written (line {line_no} is not the line "
                    "deepseek-ls appended there)")
        end = pos  # a torn or zeroed last line (a crash mid-write): the log's repair cuts it
    _note_checked(session_dir, session_id, workspace, record, data, start, end)
    return None


# A log whose chain was checked through more than this since the last record gets a new one.
_CHECK_RECORD_MIN = 1 << 20


def _checked_until(session_dir: Path, session_id: str, workspace: str, marker: dict, data: bytes) -> int | None:
    """Where the chain check of `data` may start instead of the marker's coverage: the end of
    the prefix an earlier check found unbroken (`CHECKED_NAME`), when `data` still begins with
    exactly those bytes; None when there is no such record, or it does not hold here."""
    try:
        record = json.loads(_read_marker(session_dir / CHECKED_NAME))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # none, or not one of ours: only the faster start is lost
    if (seal.why_not_ours(record, "session_id", session_id, workspace) is not None
            or record.get("kind") != _CHECKED_KIND or record.get("workspace") != workspace
            or record.get("path") != _log_rel(session_id) or record.get("marker") != marker.get("seal")):
        return None
    until = record.get("checked_bytes")
    if (not isinstance(until, int) or isinstance(until, bool) or not 0 < until <= len(data)
            or data[until - 1] != 0x0A or seal.digest(memoryview(data)[:until]) != record.get("checked_sha256")):
        return None
    return until


def _note_checked(session_dir: Path, session_id: str, workspace: str, marker: dict, data: bytes,
                  start: int, end: int) -> None:
    """Record that the chain of `data` is unbroken up to `end` (its complete lines but the last),
    when that is well past `start`: a later process then checks one sha256 of that prefix and
    the chain of what was appended since, not every line again. The last line stays out: a
    writer whose sync fails takes its line back. Never durable, never an error: a lost or
    damaged record only costs the next check its head start."""
    end = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
    if end - start < _CHECK_RECORD_MIN:
        return
    record = {"kind": _CHECKED_KIND, "session_id": session_id, "path": _log_rel(session_id),
              "workspace": workspace, "marker": marker.get("seal"), "checked_bytes": end,
              "checked_sha256": seal.digest(memoryview(data)[:end])}
    try:
        _write_marker(session_dir, record, durable=False, name=CHECKED_NAME)
    except OSError as exc:
        log.debug("%s: cannot record its checked chain (%s)", session_dir, exc)


def _complete(data: bytes) -> int:
    return data.rfind(b"\n") + 1


def _is_event(line: bytes) -> bool:
    try:
        parse_line(line, Path(LOG_NAME), 0)
    except CorruptLog:
        return False
    return True


def _migrate_v1(session_dir: Path, session_id: str, record: dict, data: bytes, workspace: str) -> str | None:
    """A first-line-only marker of ours: ours if its log still starts with the line it sealed and
    that line names this workspace (or a folder in it); then re-sealed as it is now."""
    newline = data.find(b"\n")
    first = data[:newline + 1] if newline >= 0 else b""
    if not first or seal.digest(first) != record.get("first_event_sha256"):
        return "its event log is not the one that was sealed (the first event differs)"
    root = None
    try:
        root = (parse_line(first, session_dir / LOG_NAME, 1).get("payload") or {}).get("workspace_root")
        recorded = Path(seal.workspace_id(root)) if isinstance(root, str) and root else None
    except (CorruptLog, OSError, RuntimeError, AttributeError):
        recorded = None
    if recorded is None or not recorded.is_relative_to(workspace):
        return (f"it was sealed in another workspace ({root if recorded else 'none named'!r}): "
                "copied from there, or this project was moved or renamed since")
    try:
        _write_marker(session_dir, _marker(session_id, workspace, data[:_complete(data)], migrated_from=1),
                      durable=True)
    except OSError:
        pass  # a read-only workspace: still ours, checked as version 1 again next time
    return None


@dataclass
class Adoptable:
    """What adopting a session would vouch for: shown to the person before they confirm."""

    session_id: str
    reason: str  # why it is ignored now
    created_at: str | None
    workspace_root: str | None
    prompt: str | None
    event_count: int
    torn_bytes: int  # an incomplete last line, left out (the log's repair cuts it)
    log: bytes  # the complete lines that will be sealed


def adoptable(session_dir: Path, session_id: str) -> Adoptable:
    """The session in `session_dir` as adoption would seal it; `CannotAdopt` when it is ours
    already, or damaged (an unreadable or non-event line, seq_nos out of order, another
    session's events, not starting with `SessionCreated@v1`)."""
    session_dir = Path(session_dir)
    reason = why_not_ours(session_dir, session_id)
    if reason is None:
        raise CannotAdopt(f"session {session_id} is already yours: nothing to adopt")
    if session_dir.is_symlink() or (session_dir / LOG_NAME).is_symlink():
        raise CannotAdopt(f"session {session_id} cannot be adopted: its directory or log is a symbolic link")
    data = _read_log(session_dir / LOG_NAME)
    if data is None:
        raise CannotAdopt(f"session {session_id} cannot be adopted: {LOG_NAME} is not a readable regular file")
    end = _complete(data)
    events = []
    for n, line in enumerate(data[:end].splitlines(), start=1):
        try:
            event = parse_line(line, session_dir / LOG_NAME, n)
        except CorruptLog as exc:
            raise CannotAdopt(f"session {session_id} is damaged, not adopted: {exc}") from None
        if event["seq_no"] != n or event.get("session_id") != session_id:
            raise CannotAdopt(f"session {session_id} is damaged, not adopted: line {n} is event "
                              f"{event['seq_no']} of session {event.get('session_id')!r}")
        events.append(event)
    if not events or events[0]["kind"] != "SessionCreated@v1":
        raise CannotAdopt(f"session {session_id} is damaged, not adopted: it does not start with SessionCreated@v1")
    first = events[0].get("payload") or {}
    return Adoptable(session_id=session_id, reason=reason, created_at=events[0].get("ts"),
                     workspace_root=first.get("workspace_root"), prompt=first.get("prompt"),
                     event_count=len(events), torn_bytes=len(data) - end, log=data[:end])


def adopt(session_dir: Path, found: Adoptable) -> Path:
    """Seal the session `found` describes as the person's own, in this workspace, exactly as it was
    shown to them; record the adoption (`seal.record_adoption`) and return the audit file."""
    session_dir = Path(session_dir)
    workspace = _workspace(session_dir)
    _write_marker(session_dir, _marker(found.session_id, workspace, found.log, adopted=True), durable=True)
    return seal.record_adoption({
        "record": "session", "id": found.session_id, "workspace": workspace,
        "sha256": seal.digest(found.log), "events": found.event_count, "was_ignored_because": found.reason,
    })
