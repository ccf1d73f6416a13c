"""Whose session is this: a sealed marker beside each event log.

A repository can commit `.deepseek/sessions/<id>/events.jsonl` (and `.deepseek/state.db`),
and in a fresh clone those logs would be listed, replayed and resumed as the person's own
history. So when a session is created, once its first event (`SessionCreated@v1`) is
durable, a marker `session.seal` is written beside the log: the session id, the log's
path relative to the state dir and the sha256 of that first line, sealed with the per-user
key of `patch/seal.py`. A session is ours when that marker verifies; any other session
directory is ignored, with the reason `why_not_ours` gives.

What it covers: logs a repository (or another user or machine) ships, a marker copied to
another session id, a log swapped under a marker (its first line changed). What it does not
cover, on purpose: the lines after the first. Sealing each line would cost an HMAC and a
format change on the append path; the events after the first are the person's own
process's, and a workspace writable by someone else is outside this promise. So a log of
ours edited by hand (or appended to by another program) still counts as ours, and sessions
created before markers existed are ignored (`deepseek-ls sessions` names them).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from deepseek_ls.patch import seal
from deepseek_ls.store.log import SessionNotFound

MARKER_NAME = "session.seal"
LOG_NAME = "events.jsonl"
_KIND = "deepseek-ls session"
_MARKER_MAX = 4096


class NotOurSession(SessionNotFound):
    """The session exists in the workspace but this user's deepseek-ls did not write it."""


def not_ours(session_id: str, why: str) -> NotOurSession:
    return NotOurSession(
        f"session {session_id} was not written by you: {why}. It is ignored: never listed, "
        "replayed or resumed as yours"
    )


def _log_rel(session_id: str) -> str:
    return f"sessions/{session_id}/{LOG_NAME}"


def _first_line(log_path: Path) -> bytes | None:
    try:
        with open(log_path, "rb") as fh:
            line = fh.readline()
    except OSError:
        return None
    return line if line.endswith(b"\n") else None


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


def seal_session(session_dir: Path, session_id: str, *, durable: bool = True) -> None:
    """Write the sealed marker of a session whose first event is already in its log."""
    first = _first_line(session_dir / LOG_NAME)
    if first is None:
        raise OSError(f"{session_dir / LOG_NAME} has no complete first event to seal")
    record = seal.sealed({
        "kind": _KIND,
        "session_id": session_id,
        "path": _log_rel(session_id),
        "first_event_sha256": seal.digest(first),
    })
    tmp = session_dir / f".{MARKER_NAME}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True))
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, session_dir / MARKER_NAME)
    if durable:
        fd = os.open(session_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def why_not_ours(session_dir: Path, session_id: str) -> str | None:
    """None when the session in `session_dir` was created by this user's deepseek-ls; else why
    not, in words for a log line or the person."""
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
    why = seal.why_not_ours(record, "session_id", session_id)
    if why is not None:
        return why
    if record.get("kind") != _KIND or record.get("path") != _log_rel(session_id):
        return f"its seal names {record.get('path')!r}, not {_log_rel(session_id)!r}"
    first = _first_line(session_dir / LOG_NAME)
    if first is None or seal.digest(first) != record.get("first_event_sha256"):
        return "its event log is not the one that was sealed (the first event differs)"
    return None
