"""Sessions in the editor: the plan document, and the commands sessions / resume /
cancel / undo plus the requests `deepseek/plan` and `deepseek/status`. The cached
views and the helpers the session features share are in `session_views.py`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.approvals import ApprovalBroker
from deepseek_ls.lsp.code_lens import plan_doc_relpath
from deepseek_ls.lsp.edits import changed
from deepseek_ls.lsp.plan_doc import read_comments, render
from deepseek_ls.lsp.questions import cancel_questions
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, refresh_session, sessions_of, status
from deepseek_ls.lsp.uris import current_text

log = logging.getLogger(__name__)


def _same_plan(previous: dict[str, Any] | None, view: dict[str, Any]) -> bool:
    before = (previous or {}).get("plan") or {}
    after = view.get("plan") or {}
    return before.get("plan_id") == after.get("plan_id") and before.get("version") == after.get("version")


def plan_document_path(ls: DeepSeekServer, session_id: str) -> Path:
    assert ls.root is not None
    return ls.root / plan_doc_relpath(session_id)


def plan_comments(ls: DeepSeekServer, session_id: str) -> dict[str, list[str]]:
    """Comments the person wrote in the plan document (buffer if open, else disk)."""
    assert ls.root is not None
    text, _ = current_text(ls, ls.uri_of(plan_doc_relpath(session_id)))
    return read_comments(text)


def write_plan_document(ls: DeepSeekServer, session_id: str, plan: dict[str, Any], *, keep_comments: bool) -> Path:
    """Write `.deepseek/plans/<session>.md`; comments survive while the plan version
    is unchanged (a revision consumed them); they are read from the open buffer
    when there is one, so unsaved comments are kept too."""
    path = plan_document_path(ls, session_id)
    comments = plan_comments(ls, session_id) if keep_comments and path.exists() else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    research = ((sessions_of(ls).views.get(session_id) or {}).get("hetun") or {}).get("research") or {}
    path.write_text(render(session_id, plan, comments, research=research.get("synthesis")), encoding="utf-8")
    return path


def _write_plan(ls: DeepSeekServer, session_id: str, view: dict[str, Any], previous: dict[str, Any] | None) -> None:
    """On every refresh (`session_views.refresh_session`): the plan document of a session with a plan."""
    if view.get("plan"):
        write_plan_document(ls, session_id, view["plan"], keep_comments=_same_plan(previous, view))


# -- commands ------------------------------------------------------------------


async def sessions_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.agent.state import describe_state  # the core loads after `initialize`

    summaries = await asyncio.to_thread(agent(ls).sessions)
    return {
        "sessions": [
            {
                "session_id": s.session_id,
                "state": s.state,
                "state_label": describe_state(s.state)["state_label"],
                "created": s.created_at,
                "prompt": s.prompt,
                "mode": s.mode,
                "last_failure": s.last_failure,
                "error": s.error,
                "state_reason": s.state_reason,
                "cost": s.cost,
            }
            for s in summaries
        ]
    }


async def resume_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.agent.state import describe_state  # the core loads after `initialize`

    a = params.parse_args(params.SessionArgs, args)
    result = await agent(ls).resume(a.session_id)
    sid = result["session_id"]
    view = refresh_session(ls, sid)
    changed(ls, [f for p in view.get("patches", []) for f in p.get("files", [])])
    return {"session_id": sid, "state": view["state"], "state_label": describe_state(view["state"])["state_label"],
            "plan": view.get("plan")}


CANCEL_WAIT_SECONDS = 10.0


async def cancel_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Stop what runs: the command driving `session_id`, or with no session_id every
    running agent command (ask, plan, step, revision, verification); then the
    session's pending question and approvals. Answers once the work has stopped."""
    a = params.parse_args(params.OptionalSessionArgs, args)
    state = sessions_of(ls)
    if a.session_id:
        tasks = [t for t in [state.drivers.get(a.session_id)] if t is not None]
    else:
        tasks = list(state.running)
    tasks = [t for t in tasks if not t.done() and t is not asyncio.current_task()]
    sessions = {sid for sid, t in state.drivers.items() if t in tasks}
    if a.session_id:
        sessions.add(a.session_id)
    elif not tasks and state.active:
        sessions.add(state.active)
    if not tasks and not sessions:
        return {"cancelled": False, "session_id": None, "sessions": []}
    # The running command is stopped as a whole (its session pauses, resumable);
    # a question it waits on is withdrawn with it.
    for task in tasks:
        task.cancel()
    if tasks:
        # The tasks pause their sessions as they unwind (a stopped step becomes runnable).
        _, still = await asyncio.wait(tasks, timeout=CANCEL_WAIT_SECONDS)
        if still:
            log.warning("%d cancelled command(s) still unwinding after %ss", len(still), CANCEL_WAIT_SECONDS)
    cancelled = bool(tasks)
    approvals = ls.feature_state(ApprovalBroker)
    for sid in sorted(sessions):
        if await cancel_questions(ls, sid):
            cancelled = True  # a question left without its command: the agent ends it (Idle)
        elif not tasks:
            cancelled = await agent(ls).cancel(sid) or cancelled
        for request_ in approvals.pending():
            if request_.session_id in (sid, None):
                approvals.resolve(request_.request_id, "cancel", "session cancelled")
                cancelled = True
        refresh_session(ls, sid, make_active=False)
    session_id = a.session_id or (sorted(sessions)[0] if len(sessions) == 1 else None)
    return {"cancelled": cancelled, "session_id": session_id, "sessions": sorted(sessions)}


async def undo_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Undo the newest checkpoint (a disk apply, or an apply the agent made in the editor) onto the
    buffers the person sees: what they typed since is kept, an overlap refuses it naming the files."""
    from deepseek_ls.lsp.editor_undo import undo_checkpoints

    store = ls.services.patches if ls.services else None
    if store is None:
        raise RuntimeError("the server is not initialized")
    live = [m for m in store.checkpoints.list() if not m.get("restored")]
    if not live:
        raise LookupError(
            "nothing to undo: no checkpoint was made (hunks accepted in the editor are undone with the editor's undo)"
        )
    checkpoint_id = live[-1]["checkpoint_id"]
    outcome = await undo_checkpoints(ls, [checkpoint_id])
    changed(ls, outcome.restored)
    return {"restored": outcome.restored, "checkpoint_id": checkpoint_id, "merged": outcome.merged,
            "unsaved": outcome.in_buffers}


async def compact_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Compact the session's conversation before its next model call (agent/compaction.py); the answer
    says whether it will, and the context meter as it is now."""
    a = params.parse_args(params.CompactArgs, args)
    sid = a.session_id or sessions_of(ls).active
    if not sid:
        raise LookupError("no session to compact: start one with deepseek.ask or deepseek.plan")
    return agent(ls).compact(sid, a.focus)


def plan_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any] | None:
    a = params.parse_args(params.OptionalSessionArgs, raw)
    sid = a.session_id or sessions_of(ls).active
    if not sid:
        return None
    view = sessions_of(ls).views.get(sid)
    if view is None:
        view = refresh_session(ls, sid, make_active=False)
    out = {"session_id": sid, "state": view.get("state"), "plan": view.get("plan")}
    if view.get("hetun"):
        out["hetun"] = view["hetun"]  # research tree, mission card, decision (Hetun sessions)
    return out


def status_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any]:
    return status(ls)


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command, request

    command(server, names.CMD_SESSIONS, sessions_command)
    command(server, names.CMD_RESUME, resume_command)
    command(server, names.CMD_CANCEL, cancel_command)
    command(server, names.CMD_UNDO, undo_command)
    command(server, names.CMD_COMPACT, compact_command)
    request(server, names.REQ_PLAN, plan_request)
    request(server, names.REQ_STATUS, status_request)
    sessions_of(server).writers.append(_write_plan)

