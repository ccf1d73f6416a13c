"""Verification after the editor settled a step: when every hunk of a step is
accepted or rejected, the agent completes the step (marks it, verifies when it
was the last, recovers) — once the accepted files are saved, because
verification runs on the files on disk. A Hetun mission waits for its saves the
same way, and goes on with the continuation it gave (`mission.resume_mission`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from lsprotocol import types

from deepseek_ls.lsp.documents import DocumentEvents
from deepseek_ls.lsp.edits import HunkState
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, driving, patch_info, refresh_session
from deepseek_ls.lsp.uris import open_document, uri_to_relpath

# How a verification that is not one step's goes on once the files are saved: (server, session_id).
Resume = Callable[[DeepSeekServer, str], Awaitable[None]]


@dataclass
class PendingVerification:
    """Sessions whose verification waits for files to be saved (`DeepSeekServer.feature_state`):
    {session_id: (step_id, files, resume)}; `resume` None: complete the step."""

    waiting: dict[str, tuple[str, list[str], Resume | None]] = field(default_factory=dict)


async def on_patch_settled(ls: DeepSeekServer, patch_id: str) -> None:
    """When every hunk of a step is accepted or rejected, verify the step — once
    the accepted changes are saved (verification runs on the files on disk)."""
    info = patch_info(ls, patch_id)
    if not info and ls.services is not None:
        owner = ls.services.patches.get(patch_id).session_id
        if owner:
            refresh_session(ls, owner, make_active=False)
            info = patch_info(ls, patch_id)
    session_id, step_id = info.get("session_id"), info.get("step_id")
    if not session_id or not step_id:
        return
    view = refresh_session(ls, session_id, make_active=False)
    records = [p for p in view.get("patches", []) if p.get("step_id") == step_id]
    if not all(set(p["applied"]) | set(p["rejected"]) >= set(p["hunk_ids"]) for p in records):
        return
    files = sorted({f for p in records if p["applied"] for f in p["files"]})
    ls.feature_state(PendingVerification).waiting[session_id] = (step_id, files, None)
    _verify_when_saved(ls, session_id)


def unsaved(ls: DeepSeekServer, files: list[str]) -> list[str]:
    """Files whose open buffer differs from the file on disk."""
    from deepseek_ls.patch.overlay import (
        read_disk_text,  # the core loads after `initialize`
    )

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
                      what: str = "the step", resume: Resume | None = None) -> None:
    """Verify once `files` are saved (now, if they are). `step_id` "" with `resume`: a Hetun
    mission, which goes on straight through (`mission.resume_mission`) instead of completing one step."""
    ls.feature_state(PendingVerification).waiting[session_id] = (step_id, files, resume)
    waiting = unsaved(ls, files)
    if waiting:
        ls.show_message(f"deepseek-ls: save {', '.join(waiting)} to verify {what}.")
        return
    _start_verification(ls, session_id)


def _verify_when_saved(ls: DeepSeekServer, session_id: str) -> None:
    step_id, files, resume = ls.feature_state(PendingVerification).waiting[session_id]
    verify_when_saved(ls, session_id, step_id, files, resume=resume)


def _start_verification(ls: DeepSeekServer, session_id: str) -> None:
    step_id, _, resume = ls.feature_state(PendingVerification).waiting.pop(session_id)
    if resume is not None:
        ls.tasks.spawn(resume(ls, session_id), f"verify mission of {session_id}")
        return
    ls.tasks.spawn(_complete_step(ls, session_id, step_id), f"verify step {step_id}")


def on_saved(ls: DeepSeekServer, uri: str) -> None:
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    for session_id, (_, files, _) in list(ls.feature_state(PendingVerification).waiting.items()):
        # unsaved() reads every file of the step from disk: once per save, not twice.
        if rel in files and not unsaved(ls, files):
            _start_verification(ls, session_id)


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
    server.feature_state(HunkState).settled_listeners.append(lambda patch_id: on_patch_settled(server, patch_id))
    server.feature_state(DocumentEvents).on_save.append(lambda uri: on_saved(server, uri))
