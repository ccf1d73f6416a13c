"""SQLite (WAL) projections of a workspace's event logs: `.deepseek/state.db`.

The logs are the truth; this database is a cache that any process can bring up
to date. `sync()` applies the events appended since the last sync (each
session remembers the byte offset it has projected), a few SQL statements per
event (`projector.py`); `rebuild()` throws every row away and projects every log
from the start, folded in memory and written one statement per table (`fold.py`).
Both must give the same rows.
When `projector.SCHEMA_VERSION` changes, the database is rebuilt on open.

Only sessions that are ours (`store/provenance.py`) are projected: rows of any other
session are dropped on `sync()`, and a database this user's deepseek-ls did not create
(a repository can commit `.deepseek/state.db`; its `meta` table then lacks our sealed
`owner` row) is emptied on open and rebuilt from our logs.
"""

from __future__ import annotations

import fcntl
import gc
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any, Callable

from deepseek_ls.store import provenance, seal
from deepseek_ls.store.fold import Fold
from deepseek_ls.store.log import CorruptLog, SessionNotFound, parse_line
from deepseek_ls.store.projector import (
    SCHEMA,
    SCHEMA_VERSION,
    SESSION_TABLES,
    apply_event,
)

log = logging.getLogger(__name__)

DB_NAME = "state.db"
OPEN_LOCK_NAME = "state.db.lock"
SESSIONS_DIR = "sessions"
LOG_NAME = "events.jsonl"

# Columns holding JSON text, decoded in dumps.
_JSON_COLUMNS = {
    "tool_calls", "plan", "files", "data", "arguments", "value", "reason_codes", "features",
    "weights", "contributions", "usage",
}


class Projections:
    """The projection database of one workspace state dir."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.sessions_dir = self.state_dir / SESSIONS_DIR
        self.db_path = self.state_dir / DB_NAME
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.db = self._connect()

    # -- lifecycle ---------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Opening sets WAL mode and may reset the schema: two processes (or threads) doing that
        # at once get "database is locked" or "locking protocol" from SQLite, and deleting a
        # damaged file under a live connection corrupts it. So openers take turns.
        with open(self.state_dir / OPEN_LOCK_NAME, "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                return self._open_db()
            except sqlite3.DatabaseError as error:
                if not _is_damage(error):
                    raise
                # Derived data: a damaged cache is replaced and the logs rebuild it.
                log.warning("%s is damaged (%s); rebuilding it from the event logs", self.db_path, error)
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)
                return self._open_db()

    def _open_db(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # Big enough that a full rebuild does not spill pages mid-transaction.
            db.execute("PRAGMA cache_size=-65536")
            with _transaction(db):
                if _schema_version(db) != SCHEMA_VERSION:
                    _reset(db)
                elif (why := _why_not_our_db(db)) is not None:
                    log.warning("%s was not made by you (%s); rebuilding it from your event logs",
                                self.db_path, why)
                    _reset(db)
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Projections":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- bringing rows up to date ----------------------------------------------------

    def session_ids(self) -> list[str]:
        """The sessions that are ours (`provenance.why_not_ours`), oldest first."""
        if not self.sessions_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.sessions_dir.iterdir()
            if (p / LOG_NAME).is_file() and provenance.why_not_ours(p, p.name) is None
        )

    def sync(self, session_id: str | None = None) -> None:
        """Apply the events appended since the last sync (one session, or all); rows of sessions
        that are not ours (or whose log is gone) are dropped by a sync of all."""
        self._bring_up(session_id, self._sync_session)

    def _bring_up(self, session_id: str | None, project: Callable[[str], None]) -> None:
        if session_id:
            if not (self.sessions_dir / session_id / LOG_NAME).is_file():
                raise SessionNotFound(f"no session {session_id} in {self.sessions_dir}")
            if (why := provenance.why_not_ours(self.sessions_dir / session_id, session_id)) is not None:
                with _transaction(self.db):
                    self._forget(session_id)
                raise provenance.not_ours(session_id, why)
        ours = [session_id] if session_id else self.session_ids()
        if not session_id:
            with _transaction(self.db):
                known = {r[0] for r in self.db.execute("SELECT session_id FROM sessions")}
                for stale in known - set(ours):
                    self._forget(stale)
        for sid in ours:
            with _transaction(self.db):  # serialises syncing processes; offsets stay exact
                project(sid)

    def rebuild(self, session_id: str | None = None) -> None:
        """Drop the rows (of one session, or all) and apply the logs from the start."""
        with _transaction(self.db):
            if session_id is None:
                _reset(self.db)
            else:
                self._forget(session_id)
        # The rows are derived from the logs: no need to fsync while re-deriving them.
        self.db.execute("PRAGMA synchronous=OFF")
        try:
            with _no_cycle_collection():
                self._bring_up(session_id, self._fold_session)
        finally:
            self.db.execute("PRAGMA synchronous=NORMAL")

    def _forget(self, session_id: str) -> None:
        for table in ("sessions", *SESSION_TABLES):
            self.db.execute(f"DELETE FROM {table} WHERE session_id=?", (session_id,))

    def _fold_session(self, sid: str) -> None:
        """Project a session that has no rows yet from its whole log: folded in memory, each table
        written with one statement (`fold.py`). A log the fold is not sure to project exactly as
        the SQL path would (an error, an odd value) is projected by `_sync_session` instead."""
        path = self.sessions_dir / sid / LOG_NAME
        size = path.stat().st_size if path.exists() else 0
        known = self.db.execute("SELECT 1 FROM sessions WHERE session_id=?", (sid,)).fetchone()
        if known is not None or size == 0:
            self._sync_session(sid)
            return
        with open(path, "rb") as fh:
            data = fh.read(size)
        fold = Fold(sid)
        try:
            fold.feed(data)
        except Exception as why:  # noqa: BLE001 - the SQL path projects it and reports what is wrong
            log.debug("session %s: projected event by event (%r)", sid, why)
            self._sync_session(sid)
            return
        self.db.execute("SAVEPOINT fold")
        try:
            fold.write(self.db)
        except Exception as why:  # noqa: BLE001 - a value SQLite cannot store: as above
            self.db.execute("ROLLBACK TO fold")
            self.db.execute("RELEASE fold")
            log.debug("session %s: projected event by event (%r)", sid, why)
            self._sync_session(sid)
            return
        self.db.execute("RELEASE fold")

    def _sync_session(self, sid: str) -> None:
        path = self.sessions_dir / sid / LOG_NAME
        db = self.db
        row = db.execute(
            "SELECT log_offset, log_error, last_seq, event_count, created_at, updated_at "
            "FROM sessions WHERE session_id=?",
            (sid,),
        ).fetchone()
        size = path.stat().st_size if path.exists() else 0
        if row is not None and size < row[0]:
            # The log shrank below what we projected: it was replaced; start over.
            self._forget(sid)
            row = None
        if row is None:
            db.execute("INSERT INTO sessions(session_id) VALUES (?)", (sid,))
            row = (0, None, 0, 0, None, None)
        offset, error, last_seq, count, created_at, updated_at = row
        if error or size <= offset:
            return
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(size - offset)
        done = 0  # bytes of `data` applied: whole lines only (a line being written waits)
        try:
            while (newline := data.find(b"\n", done)) >= 0:
                event = parse_line(data[done:newline], path, count + 1)
                apply_event(db, sid, event)
                last_seq, count = event["seq_no"], count + 1
                created_at = created_at or event["ts"]
                updated_at = event["ts"]
                done = newline + 1
        except (CorruptLog, KeyError, TypeError, ValueError, AttributeError, OverflowError,
                sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError) as bad:
            # Keep what was projected up to the bad line; the log itself is left alone.
            error = f"{path}: event {count + 1}: {bad!r}"
            log.warning("cannot project session %s: %s", sid, error)
        db.execute(
            "UPDATE sessions SET log_offset=?, last_seq=?, event_count=?, created_at=?, "
            "updated_at=?, log_error=? WHERE session_id=?",
            (offset + done, last_seq, count, created_at, updated_at, error, sid),
        )

    # -- reading ------------------------------------------------------------------------

    def sessions(self) -> list[dict[str, Any]]:
        """Every session's summary row, newest first (ids are UUIDv7: they sort by time)."""
        return self._rows("SELECT * FROM sessions ORDER BY session_id DESC", (), keep_id=True)

    def llm_calls(self) -> list[dict[str, Any]]:
        """Every projected LLM call `{session_id, call_id, role, profile, model, model_entry, started_at,
        usage, error}`, in log order."""
        return self._rows(
            "SELECT session_id, call_id, role, profile, model, model_entry, started_at, usage, error FROM llm_calls "
            "ORDER BY session_id, seq_no", (), keep_id=True,
        )

    def dump_session(self, session_id: str) -> dict[str, Any]:
        """One session's projections as plain JSON-ready data."""
        found = self._rows("SELECT * FROM sessions WHERE session_id=?", (session_id,), keep_id=True)
        plans = self._table("plans", session_id, "updated_seq, plan_id")
        for plan in plans:
            plan["steps"] = self._rows(
                "SELECT step_id, position, title, status, reason, updated_seq FROM plan_steps "
                "WHERE session_id=? AND plan_id=? ORDER BY position",
                (session_id, plan["plan_id"]),
            )
        patches = self._table("patches", session_id, "staged_seq, patch_id")
        for patch in patches:
            patch["hunks"] = self._rows(
                "SELECT * FROM hunks WHERE session_id=? AND patch_id=? ORDER BY position",
                (session_id, patch["patch_id"]),
            )
            patch["status"] = _patch_status([h["status"] for h in patch["hunks"]])
        return {
            "session": found[0] if found else None,
            "transcript": self._table("transcript", session_id, "seq_no"),
            "plans": plans,
            "patches": patches,
            "tool_invocations": self._table("tool_invocations", session_id, "proposed_seq, call_id"),
            "router": {
                "decisions": self._table("router_decisions", session_id, "seq_no"),
                "escalations": self._table("router_escalations", session_id, "seq_no"),
            },
            "llm_calls": self._table("llm_calls", session_id, "seq_no"),
            "verifications": self._table("verifications", session_id, "seq_no"),
            "approvals": self._table("approvals", session_id, "requested_seq, request_id"),
        }

    def _table(self, name: str, session_id: str, order: str) -> list[dict[str, Any]]:
        return self._rows(f"SELECT * FROM {name} WHERE session_id=? ORDER BY {order}", (session_id,))

    def _rows(self, sql: str, args: tuple[Any, ...], *, keep_id: bool = False) -> list[dict[str, Any]]:
        cursor = self.db.execute(sql, args)
        names = [d[0] for d in cursor.description]
        out = []
        for values in cursor.fetchall():
            row = dict(zip(names, values))
            for key in _JSON_COLUMNS & row.keys():
                if isinstance(row[key], str):
                    row[key] = json.loads(row[key])
            row.pop("log_offset", None)  # bookkeeping, not projection
            if not keep_id:
                row.pop("session_id", None)
            out.append(row)
        return out


def _is_damage(error: sqlite3.DatabaseError) -> bool:
    """The file is not a usable database, as opposed to busy, locked or out of space."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:
        return not isinstance(error, sqlite3.OperationalError)
    return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class _no_cycle_collection:
    """The cyclic garbage collector paused (if it was running) while a rebuild folds its logs.

    A fold keeps a row for every projected event until it writes them, so each collection
    the allocations trigger walks all the rows built so far, only to find no cycle: a quarter
    of a 100k-event rebuild went there. The rows are plain tuples, lists and dicts, freed by
    reference counting. Only the CLI rebuilds (`sessions --rebuild`, `replay --json`); a thread
    that rebuilds meanwhile only finds the collector already off and leaves it to us."""

    def __enter__(self) -> None:
        self.paused = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.paused:
            gc.enable()


class _transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def _schema_version(db: sqlite3.Connection) -> int | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else None


_OWNER = {"kind": "deepseek-ls state.db", "path": DB_NAME}


def _why_not_our_db(db: sqlite3.Connection) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key='owner'").fetchone()
        record = json.loads(row[0]) if row else None
    except (sqlite3.DatabaseError, ValueError, TypeError):
        record = None
    if record is None:
        return "it has no sealed owner (shipped with the repository, or made before deepseek-ls sealed it)"
    extra = db.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')").fetchone()[0]
    if extra:
        return "it holds triggers or views deepseek-ls never creates"
    return seal.why_not_ours(record, "path", DB_NAME)


def _reset(db: sqlite3.Connection) -> None:
    # Views and triggers too: a database a repository shipped may carry them.
    for kind in ("view", "trigger", "table"):
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type=? AND name NOT LIKE 'sqlite^_%' ESCAPE '^'", (kind,))]
        for name in names:
            db.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    db.execute("INSERT INTO meta VALUES ('owner', ?)", (json.dumps(seal.sealed(_OWNER), sort_keys=True),))


def _patch_status(statuses: list[str]) -> str:
    distinct = set(statuses)
    if not distinct:
        return "empty"
    if len(distinct) == 1:
        return statuses[0]
    if distinct & {"pending", "conflict"}:
        return "partial"
    return "mixed"


def session_projection(state_dir: Path, session_id: str) -> dict[str, Any]:
    """Rebuild one session's projections from its log and return them (for `replay ID --json`)."""
    with Projections(state_dir) as projections:
        projections.rebuild(session_id)
        return projections.dump_session(session_id)


def dump_all(projections: Projections) -> dict[str, Any]:
    """Every session's dump, keyed by id: what a rebuild must reproduce exactly."""
    return {sid: projections.dump_session(sid) for sid in projections.session_ids()}
