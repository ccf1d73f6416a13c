"""Hetun missions in the editor: the mission document (`.deepseek/missions/<session>.md`) with
lenses Approve mission / Reject / Modify… (and Undo mission once it ran), and the commands behind them.

Modify… reads the text the person edited under `## Mission` (the open buffer, unsaved edits
included) and re-submits it; the document is rewritten only when the mission or its decision
changes, so the person's edits are never overwritten while they type.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.edits import changed
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, driving, refresh_session, sessions_of, show_document
from deepseek_ls.lsp.uris import current_text
from deepseek_ls.lsp.verification import PendingVerification, unsaved, verify_when_saved

log = logging.getLogger(__name__)

MISSIONS_DIR = ".deepseek/missions"


@dataclass
class MissionDocuments:
    """What each session's mission document was last written from (`DeepSeekServer.feature_state`):
    it is rewritten only when that changes, never under the person's typing."""

    written: dict[str, tuple[Any, ...]] = field(default_factory=dict)


def mission_doc_relpath(session_id: str) -> str:
    return f"{MISSIONS_DIR}/{session_id}.md"


def mission_document_path(ls: DeepSeekServer, session_id: str) -> Path:
    assert ls.root is not None
    return ls.root / mission_doc_relpath(session_id)


def write_mission_document(ls: DeepSeekServer, session_id: str, view: dict[str, Any]) -> Path | None:
    """(Re)write the mission document when the mission or its decision changed."""
    hetun = view.get("hetun") or {}
    card = hetun.get("mission")
    if not card or ls.root is None:
        return None
    path = mission_document_path(ls, session_id)
    key = (card.get("mission_id"), card.get("version"), hetun.get("decision"), view.get("state"))
    written = ls.feature_state(MissionDocuments).written
    if written.get(session_id) == key and path.exists():
        return path
    decided = {"approve": "approved", "reject": "rejected", "modify": "modified"}.get(hetun.get("decision") or "")
    if decided == "approved":
        decided += f" — session {view.get('state')}" + (f": {view.get('state_reason')}" if view.get("state_reason") else "")
    from deepseek_ls.agent.hetun import mission as missions  # the core loads after `initialize`

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(missions.render(card, session_id, decided=decided), encoding="utf-8")
    written[session_id] = key
    return path


def _write_mission(ls: DeepSeekServer, session_id: str, view: dict[str, Any], previous: dict[str, Any] | None) -> None:
    """On every refresh (`session_views.refresh_session`): the mission document of a Hetun session."""
    if view.get("hetun"):
        write_mission_document(ls, session_id, view)


def _lens(title: str, command: str, args: dict[str, Any]) -> types.CodeLens:
    start = types.Position(line=0, character=0)
    return types.CodeLens(range=types.Range(start=start, end=start),
                          command=types.Command(title=title, command=command, arguments=[args]))


def mission_lenses(ls: DeepSeekServer, uri: str, rel: str) -> list[types.CodeLens]:
    if not rel.startswith(MISSIONS_DIR + "/") or not rel.endswith(".md"):
        return []
    session_id = rel[len(MISSIONS_DIR) + 1: -3]
    view = sessions_of(ls).views.get(session_id)
    hetun = (view or {}).get("hetun") or {}
    if not hetun.get("mission"):
        return []
    ids = {"session_id": session_id}
    if hetun.get("decision") != "approve":
        return [_lens("✔ Approve mission", names.CMD_APPROVE_MISSION, ids),
                _lens("✖ Reject", names.CMD_REJECT_MISSION, ids),
                _lens("✎ Modify…", names.CMD_MODIFY_MISSION, ids)]
    if hetun.get("checkpoint") and not hetun.get("undone"):
        return [_lens("↶ Undo mission", names.CMD_UNDO_MISSION, ids)]
    return []


def _mission_files(view: dict[str, Any]) -> list[str]:
    card = ((view.get("hetun") or {}).get("mission") or {})
    return [f["path"] for f in card.get("files", [])]


async def _decide(ls: DeepSeekServer, session_id: str, decision: str, text: str | None = None) -> dict[str, Any]:
    title = {"approve": "DeepSeek: running the mission", "modify": "DeepSeek: re-planning the mission",
             "reject": "DeepSeek: rejecting the mission"}[decision]
    before = {p["patch_id"] for p in (sessions_of(ls).views.get(session_id) or {}).get("patches", [])}
    try:
        async with driving(ls, title, session_id):
            view = await agent(ls).decide_mission(session_id, decision, text)
    finally:
        view = refresh_session(ls, session_id)
    touched = sorted({f for p in view.get("patches", []) if p["patch_id"] not in before for f in p["files"]})
    changed(ls, touched)
    return {"session_id": session_id, "state": view["state"], "state_reason": view.get("state_reason"),
            "decision": (view.get("hetun") or {}).get("decision"), "mission": (view.get("hetun") or {}).get("mission"),
            "files": touched}


async def approve_mission(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Run the approved mission straight through. Its changes land through `workspace/applyEdit`
    on the open buffers (unsaved edits kept, 3-way); verification runs once they are saved."""
    a = params.parse_args(params.SessionArgs, args)
    return await _run_mission(ls, a.session_id)


async def _run_mission(ls: DeepSeekServer, session_id: str) -> dict[str, Any]:
    result = await _decide(ls, session_id, "approve")
    from deepseek_ls.agent.loop import waiting_for_save

    if result["state"] == "Paused" and waiting_for_save(result.get("state_reason")):
        files = _applied_files(ls, session_id)
        result["unsaved"] = unsaved(ls, files)
        # At once if saved meanwhile; then the mission goes on straight through.
        verify_when_saved(ls, session_id, "", files, what="the mission", resume=resume_mission)
    elif result["state"] == "Completed":
        ls.show_message("deepseek-ls: mission complete — verification passed. Undo mission reverts it in one step.")
    else:
        ls.show_message(f"deepseek-ls: mission {result['state']}: {result.get('state_reason') or ''}".rstrip(": "),
                        types.MessageType.Warning)
    return result


def _applied_files(ls: DeepSeekServer, session_id: str) -> list[str]:
    view = sessions_of(ls).views.get(session_id) or {}
    return sorted({f for p in view.get("patches", []) if p.get("applied") for f in p["files"]})


async def resume_mission(ls: DeepSeekServer, session_id: str) -> None:
    """The mission's files were saved: go on (verify, and recover straight through)."""
    await _run_mission(ls, session_id)


async def reject_mission(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.SessionArgs, args)
    return await _decide(ls, a.session_id, "reject")


async def modify_mission(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Re-submit the mission text the person edited (argument `text`, else the document's `## Mission`)."""
    a = params.parse_args(params.MissionTextArgs, args)
    view = sessions_of(ls).views.get(a.session_id) or refresh_session(ls, a.session_id)
    card = ((view.get("hetun") or {}).get("mission") or {})
    text = (a.text or "").strip()
    if not text and ls.root is not None:
        from deepseek_ls.agent.hetun import mission as missions

        document, _ = current_text(ls, ls.uri_of(mission_doc_relpath(a.session_id)))
        text = missions.read_text(document)
    if not text or text == str(card.get("text", "")).strip():
        path = write_mission_document(ls, a.session_id, view)
        if path is not None:
            show_document(ls, path)
        ls.show_message("deepseek-ls: edit the mission text under '## Mission' in the mission document, "
                        "then choose Modify… again.")
        return {"session_id": a.session_id, "modified": False, "mission": card}
    result = await _decide(ls, a.session_id, "modify", text)
    return {**result, "modified": True}


async def undo_mission(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Undo the whole mission onto the buffers (`editor_undo`): the person's typing since stays; an
    overlap refuses it, nothing changed, naming the files."""
    a = params.parse_args(params.SessionArgs, args)
    undone = await agent(ls).undo_mission(a.session_id)
    ls.feature_state(PendingVerification).waiting.pop(a.session_id, None)  # a save no longer resumes the undone mission
    changed(ls, undone.restored)
    refresh_session(ls, a.session_id)
    message = f"deepseek-ls: mission undone in {', '.join(undone.restored) or 'no file'}"
    if undone.via.startswith("workspace/applyEdit"):
        message += " (in the editor: save to write it)"
    if undone.kept:
        message += f"; left as they are (changed after the mission's checkpoint, not by it): {', '.join(undone.kept)}"
    ls.show_message(message)
    return {"session_id": a.session_id, "restored": undone.restored, "kept": undone.kept}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_APPROVE_MISSION, approve_mission)
    command(server, names.CMD_REJECT_MISSION, reject_mission)
    command(server, names.CMD_MODIFY_MISSION, modify_mission)
    command(server, names.CMD_UNDO_MISSION, undo_mission)
    sessions_of(server).writers.append(_write_mission)
