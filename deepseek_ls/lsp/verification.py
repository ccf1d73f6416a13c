"""Verification after the editor settled a step: when every hunk of a step is
accepted or rejected, the agent completes the step (marks it, verifies when it
was the last, recovers) — once the accepted files are saved, because
verification runs on the files on disk."""

from __future__ import annotations

from lsprotocol import types

from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.sessions import agent, driving, refresh_session
from deepseek_ls.lsp.uris import open_document, uri_to_relpath



async def on_patch_settled(ls: DeepSeekServer, patch_id: str) -> None:
    """When every hunk of a step is accepted or rejected, verify the step — once
    the accepted changes are saved (verification runs on the files on disk)."""
    info = ls.patch_info(patch_id)
    if not info and ls.services is not None:
        owner = ls.services.patches.get(patch_id).session_id
        if owner:
            refresh_session(ls, owner, make_active=False)
            info = ls.patch_info(patch_id)
    session_id, step_id = info.get("session_id"), info.get("step_id")
    if not session_id or not step_id:
        return
    view = refresh_session(ls, session_id, make_active=False)
    records = [p for p in view.get("patches", []) if p.get("step_id") == step_id]
    if not all(set(p["applied"]) | set(p["rejected"]) >= set(p["hunk_ids"]) for p in records):
        return
    files = sorted({f for p in records if p["applied"] for f in p["files"]})
    ls.pending_verification[session_id] = (step_id, files)
    _verify_when_saved(ls, session_id)


def unsaved(ls: DeepSeekServer, files: list[str]) -> list[str]:
    """Files whose open buffer differs from the file on disk."""
    from deepseek_ls.tools.overlay import read_disk_text  # the core loads after `initialize`

    out = []
    for rel in files:
        uri = ls.uri_of(rel)
        doc = open_document(ls, uri)
        if doc is None:
            continue
        try:
            on_disk = read_disk_text(ls.root / rel)
        except OSError:
            on_disk = None
        if on_disk != doc.source:
            out.append(rel)
    return out


def verify_when_saved(ls: DeepSeekServer, session_id: str, step_id: str, files: list[str], *,
                      what: str = "the step") -> None:
    """Verify once `files` are saved (now, if they are). `step_id` "": a Hetun mission, which goes
    on straight through (`mission.resume_mission`) instead of completing one step."""
    ls.pending_verification[session_id] = (step_id, files)
    waiting = unsaved(ls, files)
    if waiting:
        ls.show_message(f"deepseek-ls: save {', '.join(waiting)} to verify {what}.")
        return
    _start_verification(ls, session_id, step_id)


def _verify_when_saved(ls: DeepSeekServer, session_id: str) -> None:
    step_id, files = ls.pending_verification[session_id]
    verify_when_saved(ls, session_id, step_id, files)


def _start_verification(ls: DeepSeekServer, session_id: str, step_id: str) -> None:
    del ls.pending_verification[session_id]
    if not step_id:
        from deepseek_ls.lsp.mission import resume_mission

        ls.tasks.spawn(resume_mission(ls, session_id), f"verify mission of {session_id}")
        return
    ls.tasks.spawn(_complete_step(ls, session_id, step_id), f"verify step {step_id}")


def on_saved(ls: DeepSeekServer, uri: str) -> None:
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    for session_id, (step_id, files) in list(ls.pending_verification.items()):
        # unsaved() reads every file of the step from disk: once per save, not twice.
        if rel in files and not unsaved(ls, files):
            _start_verification(ls, session_id, step_id)


async def _complete_step(ls: DeepSeekServer, session_id: str, step_id: str) -> None:
    outcome = None
    try:
        async with driving(ls, "DeepSeek: verifying", session_id):
            outcome = await agent(ls).complete_step(session_id, step_id)
    finally:
        view = refresh_session(ls, session_id, make_active=False)
    if outcome is not None and outcome.unsaved:
        # A buffer changed between our check and the agent's (the editor sent the applied text
        # but has not saved it yet): wait for that save again rather than stay paused for good.
        verify_when_saved(ls, session_id, step_id, outcome.unsaved)
        return
    if view.get("state") == "Completed":
        ls.show_message("deepseek-ls: plan complete — verification passed.")
    elif outcome is not None and (outcome.status == "failed" or outcome.message):
        ls.show_message(f"deepseek-ls: {outcome.message or outcome.status}", types.MessageType.Warning)


def register(server: DeepSeekServer) -> None:
    server.patch_listeners.append(lambda patch_id: on_patch_settled(server, patch_id))
    server.save_listeners.append(lambda uri: on_saved(server, uri))
