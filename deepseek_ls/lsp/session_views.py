"""What the editor knows of the agent's sessions, and the helpers every session feature uses.

`SessionViews` is this connection's state: the cached view of each session the editor has
seen, the active session (the last plan/ask/resume), the command task driving each session
and the editor's teammate-mode switch. Below every session feature (`sessions`, `commands`,
`mission`, `verification`, `lanes`, `code_lens`, ...), which all import this module and
none of each other's for these: `agent`, `status`, `refresh_session` (which lets the
features that write a document of the session — the plan, the mission — do so through
`SessionViews.writers`), `driving`, `show_document`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.lsp.progress import work_done
from deepseek_ls.lsp.routing import explanation
from deepseek_ls.lsp.server import DeepSeekServer

log = logging.getLogger(__name__)

# Writes a document of a refreshed session: (server, session_id, view, previous view or None).
ViewWriter = Callable[[DeepSeekServer, str, dict[str, Any], "dict[str, Any] | None"], None]


@dataclass
class SessionViews:
    """The sessions of this editor connection (`DeepSeekServer.feature_state`)."""

    # Views of sessions the editor has seen: {session_id: Session.view()}.
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    generation: int = 0  # bumped on every refresh (lens cache key)
    active: str | None = None  # the session the editor is looking at (the last plan/ask/resume)
    # The command task currently driving each session, and every running agent
    # command (ask/plan before their session exists too): deepseek.cancel cancels them.
    drivers: dict[str, asyncio.Task[Any]] = field(default_factory=dict)
    running: set[asyncio.Task[Any]] = field(default_factory=set)
    # The editor's teammate-mode switch (deepseek.toggleTeammateMode); None: agent_loop.teammate_mode.
    teammate_mode: bool | None = None
    # Called in order on every refresh, before the client is told (the plan and mission documents).
    writers: list[ViewWriter] = field(default_factory=list)


def sessions_of(ls: DeepSeekServer) -> SessionViews:
    """This connection's `SessionViews`."""
    return ls.feature_state(SessionViews)


def agent(ls: DeepSeekServer) -> Any:
    if ls.services is None:
        raise RuntimeError("the server is not initialized")
    return ls.services.agent


def teammate_mode(ls: DeepSeekServer) -> bool:
    """Whether runStep uses lanes: the editor's switch, else the configuration."""
    override = sessions_of(ls).teammate_mode
    if override is not None:
        return bool(override)
    try:
        return bool(ls.config.agent_loop.teammate_mode)
    except Exception:  # noqa: BLE001 - before initialize: off
        return False


def status(ls: DeepSeekServer, session_id: str | None = None) -> dict[str, Any]:
    """`Status` (docs/protocol.md) of `session_id` (default: the active session)."""
    from deepseek_ls.agent.state import BUSY_STATES, describe_state  # the core loads after `initialize`

    sid = session_id or sessions_of(ls).active
    view = sessions_of(ls).views.get(sid or "")
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
        "context": view.get("context"),
        "running": ls.tasks.running,
        "teammate_mode": teammate_mode(ls),
        "lanes": view.get("lanes") or {"running": 0, "queued": 0, "lanes": []},
    }


def patch_info(ls: DeepSeekServer, patch_id: str) -> dict[str, Any]:
    """What a session knows of a staged patch: step_id, profile, decision_id."""
    for view in sessions_of(ls).views.values():
        for record in view.get("patches") or []:
            if record.get("patch_id") == patch_id:
                return {**record, "session_id": view.get("session_id")}
    return {}


def refresh_session(ls: DeepSeekServer, session_id: str, *, make_active: bool = True) -> dict[str, Any]:
    """Re-read the session's view from the agent, rewrite its documents (plan, mission), tell
    the client (`deepseek/status`, lens refresh)."""
    state = sessions_of(ls)
    view = agent(ls).session_view(session_id)
    previous = state.views.get(session_id)
    state.views[session_id] = view
    state.generation += 1
    if make_active:
        state.active = session_id
    for write in state.writers:
        write(ls, session_id, view, previous)
    ls.notify(names.NOTIFY_STATUS, status(ls, session_id))
    refresh_lenses(ls)
    return view


def refresh_lenses(ls: DeepSeekServer) -> None:
    if ls.client_supports("workspace", "code_lens", "refresh_support"):
        ls.tasks.spawn(ls.workspace_code_lens_refresh_async(None), "codeLens refresh")


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
            sessions_of(ls).running.add(task)

    def attach(self, session_id: str, *, make_active: bool = False) -> None:
        ls, task = self.ls, self.task
        self.session_id = session_id
        if task is not None:
            sessions_of(ls).drivers[session_id] = task
        if make_active:
            # The editor's status now names this session (its cancel targets it).
            refresh_session(ls, session_id)

    def close(self) -> None:
        state, task = sessions_of(self.ls), self.task
        if task is not None:
            state.running.discard(task)
            if self.session_id and state.drivers.get(self.session_id) is task:
                state.drivers.pop(self.session_id, None)


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


def show_document(ls: DeepSeekServer, path: Path) -> None:
    uri = ls.uri_of(path.relative_to(ls.root).as_posix())
    if ls.client_supports("window", "show_document", "support"):
        ls.tasks.spawn(
            ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True)), "show plan"
        )
