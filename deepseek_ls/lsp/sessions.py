"""Sessions in the editor: the cached session view, `deepseek/status`, the plan
document, and the commands sessions / resume / cancel / undo plus the requests
`deepseek/plan` and `deepseek/status`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any, AsyncIterator

from lsprotocol import types

from deepseek_ls.agent.state import BUSY_STATES, describe_state
from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.code_lens import plan_doc_relpath
from deepseek_ls.lsp.edits import changed, refresh_lenses
from deepseek_ls.lsp.plan_doc import read_comments, render
from deepseek_ls.lsp.progress import work_done
from deepseek_ls.lsp.questions import cancel_questions
from deepseek_ls.lsp.routing import explanation
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.uris import current_text

log = logging.getLogger(__name__)



def agent(ls: DeepSeekServer) -> Any:
    if ls.services is None:
        raise RuntimeError("the server is not initialized")
    return ls.services.agent


def status(ls: DeepSeekServer, session_id: str | None = None) -> dict[str, Any]:
    """`Status` (docs/protocol.md) of `session_id` (default: the active session)."""
    sid = session_id or ls.active_session
    view = ls.session_views.get(sid or "")
    from deepseek_ls.lsp.lanes import teammate_mode

    if view is None:
        return {"session_id": sid, "state": "Idle", **describe_state("Idle"), "max_think_active": False, "running": ls.tasks.running,
                "teammate_mode": teammate_mode(ls), "lanes": {"running": 0, "queued": 0, "lanes": []}}
    decisions = view.get("decisions") or []
    last = decisions[-1] if decisions else None
    return {
        "session_id": sid,
        "state": view.get("state", "Idle"),
        **describe_state(view.get("state", "Idle")),
        "profile": last.get("profile") if last else None,
        "max_think_active": bool(last and last.get("profile") == "max_think" and view.get("state") in BUSY_STATES),
        "last_decision": explanation(last) if last else None,
        "last_error": view.get("last_error"),
        "state_reason": view.get("state_reason"),
        "cost": view.get("cost"),
        "running": ls.tasks.running,
        "teammate_mode": teammate_mode(ls),
        "lanes": view.get("lanes") or {"running": 0, "queued": 0, "lanes": []},
    }


def refresh_session(ls: DeepSeekServer, session_id: str, *, make_active: bool = True) -> dict[str, Any]:
    """Re-read the session's view from the agent, rewrite its plan document, tell
    the client (`deepseek/status`, lens refresh)."""
    view = agent(ls).session_view(session_id)
    previous = ls.session_views.get(session_id)
    ls.session_views[session_id] = view
    ls.views_generation += 1
    if make_active:
        ls.active_session = session_id
    if view.get("plan"):
        write_plan_document(ls, session_id, view["plan"], keep_comments=_same_plan(previous, view))
    if view.get("hetun"):
        from deepseek_ls.lsp.mission import write_mission_document

        write_mission_document(ls, session_id, view)
    ls.notify(names.NOTIFY_STATUS, status(ls, session_id))
    refresh_lenses(ls)
    return view


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
    research = ((ls.session_views.get(session_id) or {}).get("hetun") or {}).get("research") or {}
    path.write_text(render(session_id, plan, comments, research=research.get("synthesis")), encoding="utf-8")
    return path


class Drive:
    """The command task driving a session, registered so `deepseek.cancel` finds it.

    A command that creates its session (ask, plan) starts unattached and calls
    `attach(session_id)` once the agent made the session. State changes reach
    the client through `state_changed`, pushed by the agent."""

    def __init__(self, ls: DeepSeekServer, task: asyncio.Task[Any] | None) -> None:
        self.ls = ls
        self.task = task
        self.session_id: str | None = None
        if task is not None:
            ls.running_commands.add(task)

    def attach(self, session_id: str, *, make_active: bool = False) -> None:
        ls, task = self.ls, self.task
        self.session_id = session_id
        if task is not None:
            ls.session_tasks[session_id] = task
        if make_active:
            # The editor's status now names this session (its cancel targets it).
            refresh_session(ls, session_id)

    def close(self) -> None:
        ls, task = self.ls, self.task
        if task is not None:
            ls.running_commands.discard(task)
            if self.session_id and ls.session_tasks.get(self.session_id) is task:
                ls.session_tasks.pop(self.session_id, None)


@contextlib.asynccontextmanager
async def driving(ls: DeepSeekServer, title: str, session_id: str | None) -> AsyncIterator[Drive]:
    """Progress + cancellation for one agent call on `session_id` (None: the call
    makes its session and attaches it through the yielded `Drive`)."""
    drive = Drive(ls, asyncio.current_task())
    if session_id:
        drive.attach(session_id)
    try:
        async with work_done(ls, title):
            yield drive
    finally:
        drive.close()


def state_changed(ls: DeepSeekServer, change: Any, loop: asyncio.AbstractEventLoop) -> None:
    """The agent's state-change hook: `deepseek/status` for this transition, now,
    then the plan document and lenses. Called on the thread that made the
    transition; one made off the event loop is handed to it."""
    try:
        on_loop = asyncio.get_running_loop() is loop
    except RuntimeError:
        on_loop = False
    if not on_loop:
        loop.call_soon_threadsafe(state_changed, ls, change, loop)
        return
    refresh_session(ls, change.session_id, make_active=False)


# -- commands ------------------------------------------------------------------


async def sessions_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
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
    if a.session_id:
        tasks = [t for t in [ls.session_tasks.get(a.session_id)] if t is not None]
    else:
        tasks = list(ls.running_commands)
    tasks = [t for t in tasks if not t.done() and t is not asyncio.current_task()]
    sessions = {sid for sid, t in ls.session_tasks.items() if t in tasks}
    if a.session_id:
        sessions.add(a.session_id)
    elif not tasks and ls.active_session:
        sessions.add(ls.active_session)
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
    for sid in sorted(sessions):
        if await cancel_questions(ls, sid):
            cancelled = True  # a question left without its command: the agent ends it (Idle)
        elif not tasks:
            cancelled = await agent(ls).cancel(sid) or cancelled
        for request_ in ls.approvals.pending() if ls.approvals else []:
            if request_.session_id in (sid, None):
                ls.approvals.resolve(request_.request_id, "cancel", "session cancelled")
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


def plan_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any] | None:
    a = params.parse_args(params.OptionalSessionArgs, raw)
    sid = a.session_id or ls.active_session
    if not sid:
        return None
    view = ls.session_views.get(sid)
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
    request(server, names.REQ_PLAN, plan_request)
    request(server, names.REQ_STATUS, status_request)


def show_document(ls: DeepSeekServer, path: Path) -> None:
    uri = ls.uri_of(path.relative_to(ls.root).as_posix())
    if ls.client_supports("window", "show_document", "support"):
        ls.tasks.spawn(
            ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True)), "show plan"
        )
