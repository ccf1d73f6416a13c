"""How events become rows: the projection tables and one function per event kind.

Projections are derived data. Applying a session's events in order, in any
number of batches, must give the same rows as applying them all at once
(`Projections.rebuild` checks nothing else). Change the tables or the meaning of
a handler → bump `SCHEMA_VERSION`, and every workspace rebuilds from its logs.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable

SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE sessions(
  session_id TEXT PRIMARY KEY, workspace_root TEXT, mode TEXT, prompt TEXT, baseline_commit TEXT,
  state TEXT NOT NULL DEFAULT 'Idle', created_at TEXT, updated_at TEXT,
  last_seq INTEGER NOT NULL DEFAULT 0, event_count INTEGER NOT NULL DEFAULT 0,
  log_offset INTEGER NOT NULL DEFAULT 0, active_plan_id TEXT, last_failure TEXT, error TEXT,
  state_reason TEXT, log_error TEXT);
CREATE TABLE transcript(
  session_id TEXT, seq_no INTEGER, role TEXT, content TEXT, reasoning_content TEXT,
  tool_calls TEXT, tool_call_id TEXT, agent_role TEXT, PRIMARY KEY(session_id, seq_no));
CREATE TABLE plans(
  session_id TEXT, plan_id TEXT, version INTEGER, goal TEXT, plan TEXT, updated_seq INTEGER,
  PRIMARY KEY(session_id, plan_id));
CREATE TABLE plan_steps(
  session_id TEXT, plan_id TEXT, step_id TEXT, position INTEGER, title TEXT, status TEXT,
  reason TEXT, updated_seq INTEGER, PRIMARY KEY(session_id, plan_id, step_id));
CREATE TABLE patches(
  session_id TEXT, patch_id TEXT, files TEXT, diff TEXT, staged_seq INTEGER,
  PRIMARY KEY(session_id, patch_id));
CREATE TABLE hunks(
  session_id TEXT, patch_id TEXT, hunk_id TEXT, position INTEGER, file TEXT, status TEXT,
  applied_via TEXT, checkpoint_id TEXT, data TEXT, updated_seq INTEGER,
  PRIMARY KEY(session_id, patch_id, hunk_id));
CREATE TABLE tool_invocations(
  session_id TEXT, call_id TEXT, tool TEXT, arguments TEXT, approval TEXT, ok INTEGER,
  value TEXT, error TEXT, proposed_seq INTEGER, result_seq INTEGER, PRIMARY KEY(session_id, call_id));
CREATE TABLE router_decisions(
  session_id TEXT, seq_no INTEGER, decision_id TEXT, unit TEXT, role TEXT, score REAL,
  threshold REAL, profile TEXT, model TEXT, escalation INTEGER, reason_codes TEXT, features TEXT,
  weights TEXT, contributions TEXT, PRIMARY KEY(session_id, seq_no));
CREATE TABLE router_escalations(
  session_id TEXT, seq_no INTEGER, decision_id TEXT, from_profile TEXT, to_profile TEXT,
  reason_codes TEXT, PRIMARY KEY(session_id, seq_no));
CREATE TABLE llm_calls(
  session_id TEXT, seq_no INTEGER, call_id TEXT, role TEXT, profile TEXT, model TEXT, usage TEXT,
  ttft_ms REAL, total_ms REAL, retries INTEGER, error TEXT, model_entry TEXT, started_at TEXT,
  PRIMARY KEY(session_id, seq_no));
CREATE TABLE verifications(
  session_id TEXT, seq_no INTEGER, command TEXT, exit_code INTEGER, ok INTEGER, duration_ms REAL,
  fingerprint TEXT, PRIMARY KEY(session_id, seq_no));
CREATE TABLE approvals(
  session_id TEXT, request_id TEXT, kind TEXT, title TEXT, detail TEXT, answer TEXT,
  requested_seq INTEGER, resolved_seq INTEGER, PRIMARY KEY(session_id, request_id));
"""

# Tables holding one session's rows, in dump order (all but meta and sessions).
SESSION_TABLES = (
    "transcript",
    "plans",
    "plan_steps",
    "patches",
    "hunks",
    "tool_invocations",
    "router_decisions",
    "router_escalations",
    "llm_calls",
    "verifications",
    "approvals",
)

Handler = Callable[[sqlite3.Connection, str, int, dict[str, Any]], None]


# One encoder for every row: `json.dumps` with options builds a new encoder per call,
# which dominated rebuild time.
_j = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


# Plans and hunks arrive as free-form JSON (their owners validate them); a row takes
# what it can and stores anything structured as JSON text rather than failing.
def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _j(value)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _objects(value: Any) -> list[dict[str, Any]]:
    return [item if isinstance(item, dict) else {} for item in value] if isinstance(value, list) else []


def apply_event(db: sqlite3.Connection, session_id: str, event: dict[str, Any]) -> None:
    """Apply one event envelope (as read from the log) to the tables."""
    handler = HANDLERS.get(event["kind"])
    if handler is not None:
        handler(db, session_id, event["seq_no"], event.get("payload") or {})


def _session_created(db, sid, seq, p) -> None:
    db.execute(
        "UPDATE sessions SET workspace_root=?, mode=?, prompt=?, baseline_commit=? WHERE session_id=?",
        (p.get("workspace_root"), p.get("mode"), p.get("prompt"), p.get("baseline_commit"), sid),
    )


def _state_changed(db, sid, seq, p) -> None:
    # A failed session names its error and its class; any later state (a resume) clears the error.
    if p["to_state"] == "Failed":
        db.execute(
            "UPDATE sessions SET state=?, state_reason=?, error=?, "
            "last_failure=COALESCE(?, last_failure, 'AgentFailure') WHERE session_id=?",
            (p["to_state"], p.get("reason", ""), p.get("reason") or "failed", _text(p.get("error_kind")), sid),
        )
        return
    db.execute(
        "UPDATE sessions SET state=?, state_reason=?, error=NULL WHERE session_id=?",
        (p["to_state"], p.get("reason", ""), sid),
    )


def _turn_added(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO transcript VALUES (?,?,?,?,?,?,?,?)",
        (sid, seq, p["role"], p.get("content", ""), p.get("reasoning_content"),
         _j(p.get("tool_calls") or []), p.get("tool_call_id"), p.get("agent_role")),
    )


def _step_status(step: dict[str, Any]) -> str | None:
    if step.get("status"):
        return _text(step["status"])
    return "done" if step.get("done") else None


def _put_plan(db, sid, seq, plan: dict[str, Any], version: int) -> None:
    plan_id = _text(plan.get("plan_id") or f"plan-{seq}")
    old = {
        row[0]: row[1]
        for row in db.execute(
            "SELECT step_id, status FROM plan_steps WHERE session_id=? AND plan_id=?", (sid, plan_id)
        )
    }
    db.execute("DELETE FROM plan_steps WHERE session_id=? AND plan_id=?", (sid, plan_id))
    db.execute(
        "INSERT OR REPLACE INTO plans VALUES (?,?,?,?,?,?)",
        (sid, plan_id, version, _text(plan.get("goal")), _j(plan), seq),
    )
    for position, step in enumerate(_objects(plan.get("steps"))):
        step_id = _text(step.get("step_id") or step.get("id") or f"step-{position + 1}")
        # A revision keeps a step's progress unless it says otherwise.
        status = _step_status(step) or old.get(step_id) or "pending"
        db.execute(
            "INSERT OR REPLACE INTO plan_steps VALUES (?,?,?,?,?,?,?,?)",
            (sid, plan_id, step_id, position, _text(step.get("title")), status, "", seq),
        )
    db.execute("UPDATE sessions SET active_plan_id=? WHERE session_id=?", (plan_id, sid))


def _plan_created(db, sid, seq, p) -> None:
    plan = p["plan"]
    _put_plan(db, sid, seq, plan, _int(plan.get("version"), 1))


def _plan_revised(db, sid, seq, p) -> None:
    plan = p["plan"]
    _put_plan(db, sid, seq, plan, _int(plan.get("version"), p["previous_version"] + 1))


def _step_marked(db, sid, seq, p) -> None:
    updated = db.execute(
        "UPDATE plan_steps SET status=?, reason=?, updated_seq=? "
        "WHERE session_id=? AND plan_id=? AND step_id=?",
        (p["status"], p.get("reason", ""), seq, sid, p["plan_id"], p["step_id"]),
    ).rowcount
    if not updated:
        (position,) = db.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM plan_steps WHERE session_id=? AND plan_id=?",
            (sid, p["plan_id"]),
        ).fetchone()
        db.execute(
            "INSERT INTO plan_steps VALUES (?,?,?,?,?,?,?,?)",
            (sid, p["plan_id"], p["step_id"], position, None, p["status"], p.get("reason", ""), seq),
        )


def _router_decision(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO router_decisions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (sid, seq, p["decision_id"], p["unit"], p["role"], p["score"], p["threshold"], p["profile"],
         p["model"], int(bool(p.get("escalation"))), _j(p["reason_codes"]), _j(p["features"]),
         _j(p["weights"]), _j(p["contributions"])),
    )


def _router_escalation(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO router_escalations VALUES (?,?,?,?,?,?)",
        (sid, seq, p["decision_id"], p["from_profile"], p["to_profile"], _j(p["reason_codes"])),
    )


def _llm_call(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO llm_calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (sid, seq, p["call_id"], p["role"], p["profile"], p["model"], _j(p.get("usage") or {}),
         p.get("ttft_ms"), p.get("total_ms"), p.get("retries", 0), p.get("error"), p.get("model_entry"),
         p.get("started_at")),
    )


def _tool_proposed(db, sid, seq, p) -> None:
    db.execute(
        "INSERT OR REPLACE INTO tool_invocations VALUES (?,?,?,?,?,?,?,?,?,?)",
        (sid, p["call_id"], p["tool"], _j(p.get("arguments") or {}), None, None, None, None, seq, None),
    )


# One statement per event: the row is made if the proposal was never seen (arguments `{}`,
# proposed at this event), then the event's columns are set.
def _tool_approved(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO tool_invocations(session_id, call_id, tool, arguments, proposed_seq, approval) "
        "VALUES (?,?,?,'{}',?,?) ON CONFLICT(session_id, call_id) DO UPDATE SET approval=excluded.approval",
        (sid, p["call_id"], p["tool"], seq, p["answer"]),
    )


def _tool_result(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO tool_invocations(session_id, call_id, tool, arguments, proposed_seq, ok, value, error, result_seq) "
        "VALUES (?,?,?,'{}',?,?,?,?,?) ON CONFLICT(session_id, call_id) DO UPDATE SET "
        "ok=excluded.ok, value=excluded.value, error=excluded.error, result_seq=excluded.result_seq",
        (sid, p["call_id"], p["tool"], seq, int(bool(p["ok"])), _j(p.get("value")), p.get("error"), seq),
    )


def _patch_staged(db, sid, seq, p) -> None:
    db.execute(
        "INSERT OR REPLACE INTO patches VALUES (?,?,?,?,?)",
        (sid, p["patch_id"], _j(p["files"]), p.get("diff", ""), seq),
    )
    db.executemany(
        "INSERT OR REPLACE INTO hunks VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(sid, p["patch_id"], _text(hunk.get("hunk_id") or hunk.get("id") or f"h{position + 1}"), position,
          _text(hunk.get("file")), _text(hunk.get("status") or "pending"), None, None, _j(hunk), seq)
         for position, hunk in enumerate(_objects(p["hunks"]))],
    )


def _hunk_filter(p: dict[str, Any], statuses: tuple[str, ...] | None = None) -> tuple[str, list[Any]]:
    """WHERE clause for the hunks an event names: its hunk_ids, else its files, else all."""
    clause, args = "session_id=? AND patch_id=?", []
    if p.get("hunk_ids"):
        clause += f" AND hunk_id IN ({','.join('?' * len(p['hunk_ids']))})"
        args += list(p["hunk_ids"])
    elif p.get("files") or p.get("file"):
        files = p.get("files") or [p["file"]]
        clause += f" AND file IN ({','.join('?' * len(files))})"
        args += list(files)
    if statuses:
        clause += f" AND status IN ({','.join('?' * len(statuses))})"
        args += list(statuses)
    return clause, args


def _set_hunks(db, sid, seq, p, status: str, *, only: tuple[str, ...] | None = None, **extra) -> None:
    clause, args = _hunk_filter(p, only)
    sets = ", ".join(["status=?", "updated_seq=?", *(f"{k}=?" for k in extra)])
    db.execute(
        f"UPDATE hunks SET {sets} WHERE {clause}",
        (status, seq, *extra.values(), sid, p["patch_id"], *args),
    )


def _patch_applied(db, sid, seq, p) -> None:
    _set_hunks(db, sid, seq, p, "applied", applied_via=p.get("via"), checkpoint_id=p.get("checkpoint_id"))


def _patch_rejected(db, sid, seq, p) -> None:
    _set_hunks(db, sid, seq, {**p, "files": None}, "rejected", only=("pending", "conflict"))


def _patch_conflict(db, sid, seq, p) -> None:
    _set_hunks(db, sid, seq, p, "conflict", only=("pending",))


def _checkpoint_restored(db, sid, seq, p) -> None:
    db.execute(
        "UPDATE hunks SET status='reverted', updated_seq=? "
        "WHERE session_id=? AND checkpoint_id=? AND status='applied'",
        (seq, sid, p["checkpoint_id"]),
    )


def _verification_run(db, sid, seq, p) -> None:
    db.execute(
        "INSERT INTO verifications VALUES (?,?,?,?,?,?,?)",
        (sid, seq, p["command"], p.get("exit_code"), int(bool(p["ok"])), p.get("duration_ms"),
         p.get("fingerprint")),
    )


def _failure_classified(db, sid, seq, p) -> None:
    db.execute(
        "UPDATE sessions SET last_failure=? WHERE session_id=?", (p["failure_class"], sid)
    )


def _approval_requested(db, sid, seq, p) -> None:
    db.execute(
        "INSERT OR REPLACE INTO approvals VALUES (?,?,?,?,?,?,?,?)",
        (sid, p["request_id"], p["kind"], p["title"], p.get("detail", ""), None, seq, None),
    )


def _approval_resolved(db, sid, seq, p) -> None:
    db.execute(
        "UPDATE approvals SET answer=?, resolved_seq=? WHERE session_id=? AND request_id=?",
        (p["answer"], seq, sid, p["request_id"]),
    )


HANDLERS: dict[str, Handler] = {
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
