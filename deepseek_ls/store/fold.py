"""A rebuild's projector: one session's events folded into rows in memory, then written once.

`projector.py` applies each event as SQL statements on the rows already in the database (what
`Projections.sync` needs: a few new events on top of many rows). A rebuild starts from no rows, so
here each event updates plain dicts keyed by the tables' primary keys (an upsert is a dict
update, a row is written once however often it changed) and `Fold.write` inserts each table with
a few multi-row INSERTs. The rows must be the ones `projector.py` gives (tests/unit/store/
test_projections.py compares every table): each handler below mirrors its namesake there.

Anything this path is not sure to answer exactly as SQLite would raises `Unusual`: a handler's
error (the SQL path records it as the session's `log_error`), a key that is not text (SQLite
compares it through the column's affinity), a value SQLite could not bind in a row a later
event overwrites (the SQL path fails at that event). The caller then projects the session
the SQL way, which gives the exact rows and error.
"""

from __future__ import annotations

import sqlite3
from io import BytesIO
from itertools import chain, islice
from typing import Any, Iterable, Sequence

from pydantic_core import from_json, to_json

from deepseek_ls.store.projector import _int, _j, _objects, _step_status, _text


class Unusual(Exception):
    """This log needs the SQL path (`projector.apply_event`) to be projected exactly."""


_BINDABLE = (str, float, type(None), bool)


def _key(value: Any) -> str:
    if type(value) is not str:
        raise Unusual(f"key {value!r}")
    return value


def _ok(value: Any) -> Any:
    """A value stored in a row that a later event may overwrite: one SQLite binds as it is."""
    if type(value) in _BINDABLE or (type(value) is int and -(2**63) <= value < 2**63):
        return value
    raise Unusual(f"value {value!r}")


def _enc(value: Any) -> str:
    """A JSON column's text. pydantic-core's encoder takes a third of json's time; its text can
    differ from `projector._j`'s (float spelling) but reads back as the same value, which is all
    a query sees (`Projections._rows` decodes these columns). What it refuses (a lone
    surrogate, which only json's parser reads) is json's to encode."""
    if not value:
        return _EMPTY.get(type(value)) or _j(value)
    try:
        return to_json(value).decode()
    except ValueError:
        return _j(value)


_EMPTY = {list: "[]", dict: "{}", type(None): "null"}


def _opt_key(value: Any) -> str | None:
    return None if value is None else _key(value)


# NULL in a row to be written. Python's sqlite3 passes None through its adapter registry (a
# tuple built, a dict looked up, two attribute lookups) before binding it, a float it binds at
# once, and SQLite stores a NaN as NULL (sqlite3VdbeMemSetDouble): the same row for half the
# cost, and a rebuild binds a few NULLs per event. Only in rows nothing reads before `write`
# (the session row, whose columns the handlers compare with None, keeps None).
NULL = float("nan")


# Column order of each table (projector.SCHEMA), as the rows below are built.
SESSION_COLUMNS = (
    "session_id", "workspace_root", "mode", "prompt", "baseline_commit", "state", "created_at", "updated_at",
    "last_seq", "event_count", "log_offset", "active_plan_id", "last_failure", "error", "state_reason", "log_error",
)


class Fold:
    """One session's rows, built from its log's lines in order (`feed`), written by `write`."""

    def __init__(self, session_id: str) -> None:
        self.sid = session_id
        self.session: dict[str, Any] = dict.fromkeys(SESSION_COLUMNS)
        self.session.update(session_id=session_id, state="Idle", last_seq=0, event_count=0, log_offset=0)
        self.transcript: dict[int, tuple] = {}
        self.plans: dict[str, tuple] = {}
        self.steps: dict[str, dict[str, list]] = {}  # plan_id -> step_id -> [position, title, status, reason, seq]
        self.patches: dict[str, tuple] = {}
        self.hunks: dict[str, dict[str, list]] = {}  # patch_id -> hunk_id -> row after its ids
        self.tools: dict[str, list] = {}
        self.decisions: dict[int, tuple] = {}
        self.escalations: dict[int, tuple] = {}
        self.llm_calls: dict[int, tuple] = {}
        self.verifications: dict[int, tuple] = {}
        self.approvals: dict[str, list] = {}

    def feed(self, data: bytes) -> int:
        """Fold a log's complete lines in order, count them into the session row and return the
        offset after the last (a line being written waits). `parse_line` and the dispatch inlined: this
        loop runs once per line of every log rebuilt. A line `parse_line` would read differently or
        refuse (its json fallback, a lone surrogate), or that is not an envelope, raises here: the
        SQL path then reads it and names what is wrong."""
        handlers, get, parse = _HANDLERS.get, dict.get, from_json
        created_at = seq = ts = None
        count = offset = 0
        # BytesIO shares `data` and hands out one line at a time: a list of every line (split)
        # would be a second copy of the log in memory, each page of it a fault to the kernel.
        for line in BytesIO(data):
            if line[-1] != 10:  # no newline: the line being written
                break
            # Keys cached, not values: the same dozen keys on every line; values rarely repeat.
            event = parse(line, cache_strings="keys")
            seq, ts = event["seq_no"], event["ts"]
            if type(seq) is not int:
                raise Unusual(f"seq_no {seq!r}")
            created_at = created_at or ts
            handler = handlers(event["kind"])
            if handler is not None:
                handler(self, seq, get(event, "payload") or {})
            count += 1
            offset += len(line)
        self.session.update(event_count=count, created_at=created_at, last_seq=seq or 0, updated_at=ts,
                            log_offset=offset)
        return offset

    # -- writing -------------------------------------------------------------------------

    def write(self, db: sqlite3.Connection) -> None:
        """Insert every row (the session's rows must not exist yet)."""
        sid = self.sid
        s = self.session
        db.execute(f"INSERT INTO sessions VALUES ({','.join('?' * len(SESSION_COLUMNS))})",
                   tuple(s[c] for c in SESSION_COLUMNS))
        _insert(db, "transcript", 8, self.transcript.values())
        _insert(db, "plans", 6, self.plans.values())
        _insert(db, "plan_steps", 8,
                [(sid, plan_id, step_id, *row) for plan_id, steps in self.steps.items() for step_id, row in steps.items()])
        _insert(db, "patches", 5, self.patches.values())
        _insert(db, "hunks", 10,
                [(sid, patch_id, hunk_id, *row) for patch_id, hunks in self.hunks.items() for hunk_id, row in hunks.items()])
        _insert(db, "tool_invocations", 10, self.tools.values())
        _insert(db, "router_decisions", 14, self.decisions.values())
        _insert(db, "router_escalations", 6, self.escalations.values())
        _insert(db, "llm_calls", 13, self.llm_calls.values())
        _insert(db, "verifications", 7, self.verifications.values())
        _insert(db, "approvals", 8, self.approvals.values())


# Rows per INSERT statement: one statement of many rows costs SQLite and Python's sqlite3 about
# half of what `executemany` of one-row statements does per row (a step, a reset and a bind
# call each). 64 rows of the widest table (14 columns) stay under SQLite's oldest limit of
# 999 parameters.
_BATCH = 64


def _insert(db: sqlite3.Connection, table: str, width: int, rows: Iterable[Sequence[Any]]) -> None:
    """INSERT `rows` (each `width` values) into `table`, `_BATCH` rows per statement, in order."""
    one = f"({','.join('?' * width)})"
    full = f"INSERT INTO {table} VALUES {','.join([one] * _BATCH)}"
    execute, rows = db.execute, iter(rows)
    while batch := tuple(islice(rows, _BATCH)):
        sql = full if len(batch) == _BATCH else f"INSERT INTO {table} VALUES {','.join([one] * len(batch))}"
        execute(sql, tuple(chain.from_iterable(batch)))


def _new(table: dict, key: Any) -> None:
    # A plain INSERT in projector.py: a second row with this key is its IntegrityError.
    if key in table:
        raise Unusual(f"duplicate key {key!r}")


def _session_created(f: Fold, seq: int, p: dict) -> None:
    f.session.update(workspace_root=_ok(p.get("workspace_root")), mode=_ok(p.get("mode")),
                     prompt=_ok(p.get("prompt")), baseline_commit=_ok(p.get("baseline_commit")))


def _state_changed(f: Fold, seq: int, p: dict) -> None:
    s = f.session
    if p["to_state"] == "Failed":
        kind = _text(p.get("error_kind"))
        s.update(state=_ok(p["to_state"]), state_reason=_ok(p.get("reason", "")), error=_ok(p.get("reason") or "failed"),
                 last_failure=kind if kind is not None else s["last_failure"] if s["last_failure"] is not None
                 else "AgentFailure")
        return
    s.update(state=_ok(p["to_state"]), state_reason=_ok(p.get("reason", "")), error=None)


def _turn_added(f: Fold, seq: int, p: dict) -> None:
    _new(f.transcript, seq)
    f.transcript[seq] = (f.sid, seq, p["role"], p.get("content", ""), p.get("reasoning_content", NULL),
                         _enc(p.get("tool_calls") or []), p.get("tool_call_id", NULL), p.get("agent_role", NULL))


def _put_plan(f: Fold, seq: int, plan: dict[str, Any], version: int) -> None:
    plan_id = _text(plan.get("plan_id") or f"plan-{seq}")
    old = {step_id: row[2] for step_id, row in f.steps.get(plan_id, {}).items()}
    f.plans[plan_id] = (f.sid, plan_id, version, _text(plan.get("goal")), _enc(plan), seq)
    steps: dict[str, list] = {}
    f.steps[plan_id] = steps
    for position, step in enumerate(_objects(plan.get("steps"))):
        step_id = _text(step.get("step_id") or step.get("id") or f"step-{position + 1}")
        status = _step_status(step) or old.get(step_id) or "pending"
        steps.pop(step_id, None)  # INSERT OR REPLACE: the row is new, and last
        steps[step_id] = [position, _text(step.get("title")), status, "", seq]
    f.session["active_plan_id"] = plan_id


def _plan_created(f: Fold, seq: int, p: dict) -> None:
    plan = p["plan"]
    _put_plan(f, seq, plan, _int(plan.get("version"), 1))


def _plan_revised(f: Fold, seq: int, p: dict) -> None:
    plan = p["plan"]
    _put_plan(f, seq, plan, _int(plan.get("version"), p["previous_version"] + 1))


def _step_marked(f: Fold, seq: int, p: dict) -> None:
    status, reason = _opt_key(p["status"]), _ok(p.get("reason", ""))
    plan_id, step_id = _key(p["plan_id"]), _key(p["step_id"])
    steps = f.steps.get(plan_id)
    row = steps.get(step_id) if steps else None
    if row is not None:
        row[2:5] = [status, reason, seq]
        return
    steps = f.steps.setdefault(plan_id, {})
    position = max((r[0] for r in steps.values()), default=-1) + 1
    steps[step_id] = [position, NULL, status, reason, seq]


def _router_decision(f: Fold, seq: int, p: dict) -> None:
    _new(f.decisions, seq)
    f.decisions[seq] = (
        f.sid, seq, p["decision_id"], p["unit"], p["role"], p["score"], p["threshold"], p["profile"],
        p["model"], int(bool(p.get("escalation"))), _enc(p["reason_codes"]), _enc(p["features"]),
        _enc(p["weights"]), _enc(p["contributions"]))


def _router_escalation(f: Fold, seq: int, p: dict) -> None:
    _new(f.escalations, seq)
    f.escalations[seq] = (f.sid, seq, p["decision_id"], p["from_profile"], p["to_profile"], _enc(p["reason_codes"]))


def _llm_call(f: Fold, seq: int, p: dict) -> None:
    _new(f.llm_calls, seq)
    f.llm_calls[seq] = (
        f.sid, seq, p["call_id"], p["role"], p["profile"], p["model"], _enc(p.get("usage") or {}),
        p.get("ttft_ms", NULL), p.get("total_ms", NULL), p.get("retries", 0), p.get("error", NULL),
        p.get("model_entry", NULL), p.get("started_at", NULL))


# tool_invocations: session_id, call_id, tool, arguments, approval, ok, value, error, proposed_seq, result_seq
def _tool_proposed(f: Fold, seq: int, p: dict) -> None:
    call_id = _key(p["call_id"])
    f.tools.pop(call_id, None)  # INSERT OR REPLACE
    f.tools[call_id] = [f.sid, call_id, _ok(p["tool"]), _enc(p.get("arguments") or {}), NULL, NULL, NULL, NULL, seq,
                        NULL]


def _tool_approved(f: Fold, seq: int, p: dict) -> None:
    call_id, tool, answer = _key(p["call_id"]), _ok(p["tool"]), _ok(p["answer"])
    row = f.tools.get(call_id)
    if row is None:
        f.tools[call_id] = [f.sid, call_id, tool, "{}", answer, NULL, NULL, NULL, seq, NULL]
    else:
        row[4] = answer


def _tool_result(f: Fold, seq: int, p: dict) -> None:
    call_id, tool = _key(p["call_id"]), _ok(p["tool"])
    ok, value, error = int(bool(p["ok"])), _enc(p.get("value")), _ok(p.get("error", NULL))
    row = f.tools.get(call_id)
    if row is None:
        f.tools[call_id] = [f.sid, call_id, tool, "{}", NULL, ok, value, error, seq, seq]
    else:
        row[5:8] = [ok, value, error]
        row[9] = seq


# hunks after (session_id, patch_id, hunk_id): position, file, status, applied_via, checkpoint_id, data, updated_seq
def _patch_staged(f: Fold, seq: int, p: dict) -> None:
    patch_id = _key(p["patch_id"])
    f.patches.pop(patch_id, None)
    f.patches[patch_id] = (f.sid, patch_id, _enc(p["files"]), _ok(p.get("diff", "")), seq)
    hunks = f.hunks.setdefault(patch_id, {})
    for position, hunk in enumerate(_objects(p["hunks"])):
        get = hunk.get
        hunk_id = _text(get("hunk_id") or get("id") or f"h{position + 1}")
        file = get("file")
        hunks.pop(hunk_id, None)
        hunks[hunk_id] = [position, file if type(file) is str else _opt_key(_text(file)),
                          _text(get("status") or "pending"), NULL, NULL, _enc(hunk), seq]


def _named_hunks(f: Fold, p: dict, statuses: tuple[str, ...] | None) -> list[list]:
    """The hunks an event names (projector._hunk_filter): its hunk_ids, else its files, else all."""
    hunks = f.hunks.get(_key(p["patch_id"]), {})
    if ids := p.get("hunk_ids"):
        wanted = {_key(h) for h in list(ids)}
        rows = [row for hunk_id, row in hunks.items() if hunk_id in wanted]
    elif p.get("files") or p.get("file"):
        files = {_key(x) for x in list(p.get("files") or [p["file"]])}
        rows = [row for row in hunks.values() if row[1] in files]
    else:
        rows = list(hunks.values())
    if statuses:
        rows = [row for row in rows if row[2] in statuses]
    return rows


def _patch_applied(f: Fold, seq: int, p: dict) -> None:
    via, checkpoint = _ok(p.get("via", NULL)), _opt_key(p.get("checkpoint_id"))
    applied = ["applied", via, NULL if checkpoint is None else checkpoint]
    for row in _named_hunks(f, p, None):
        row[2:5] = applied
        row[6] = seq


def _set_status(f: Fold, seq: int, p: dict, status: str, only: tuple[str, ...]) -> None:
    for row in _named_hunks(f, p, only):
        row[2] = status
        row[6] = seq


def _patch_rejected(f: Fold, seq: int, p: dict) -> None:
    _set_status(f, seq, {**p, "files": None}, "rejected", ("pending", "conflict"))


def _patch_conflict(f: Fold, seq: int, p: dict) -> None:
    _set_status(f, seq, p, "conflict", ("pending",))


def _checkpoint_restored(f: Fold, seq: int, p: dict) -> None:
    checkpoint = _key(p["checkpoint_id"])
    for hunks in f.hunks.values():
        for row in hunks.values():
            if row[4] == checkpoint and row[2] == "applied":
                row[2] = "reverted"
                row[6] = seq


def _verification_run(f: Fold, seq: int, p: dict) -> None:
    _new(f.verifications, seq)
    f.verifications[seq] = (f.sid, seq, p["command"], p.get("exit_code", NULL), int(bool(p["ok"])),
                            p.get("duration_ms", NULL), p.get("fingerprint", NULL))


def _failure_classified(f: Fold, seq: int, p: dict) -> None:
    f.session["last_failure"] = _opt_key(p["failure_class"])


def _approval_requested(f: Fold, seq: int, p: dict) -> None:
    request_id = _key(p["request_id"])
    f.approvals.pop(request_id, None)
    f.approvals[request_id] = [f.sid, request_id, _ok(p["kind"]), _ok(p["title"]), _ok(p.get("detail", "")), NULL,
                               seq, NULL]


def _approval_resolved(f: Fold, seq: int, p: dict) -> None:
    answer, request_id = _ok(p["answer"]), _key(p["request_id"])
    row = f.approvals.get(request_id)
    if row is not None:
        row[5], row[7] = answer, seq


_HANDLERS = {
    "SessionCreated@v1": _session_created,
    "SessionStateChanged@v1": _state_changed,
    "TurnAdded@v1": _turn_added,
    "PlanCreated@v1": _plan_created,
    "PlanRevised@v1": _plan_revised,
    "StepMarked@v1": _step_marked,
    "RouterDecision@v1": _router_decision,
    "RouterEscalation@v1": _router_escalation,
    "LLMCall@v1": _llm_call,
    "ToolProposed@v1": _tool_proposed,
    "ToolApproved@v1": _tool_approved,
    "ToolResult@v1": _tool_result,
    "PatchStaged@v1": _patch_staged,
    "PatchApplied@v1": _patch_applied,
    "PatchRejected@v1": _patch_rejected,
    "PatchConflict@v1": _patch_conflict,
    "CheckpointRestored@v1": _checkpoint_restored,
    "VerificationRun@v1": _verification_run,
    "FailureClassified@v1": _failure_classified,
    "ApprovalRequested@v1": _approval_requested,
    "ApprovalResolved@v1": _approval_resolved,
}
