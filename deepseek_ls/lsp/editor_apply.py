"""The agent's own applies, in the editor: what the loop applies without a per-hunk click (an
approved Hetun mission, lane results merged into it) lands through `workspace/applyEdit`, the way
an accepted hunk does — never by writing the file under the editor.

`apply_patch` is the core's `World.applier` in the language server. It computes every file's text
from the buffer the person sees (3-way onto what they typed since the patch was staged; a conflict
applies nothing), sends all files as one versioned `WorkspaceEdit`, and records the hunks applied
only when the editor says it applied them. It then waits, briefly, for the editor's `didOpen` /
`didChange` of those buffers, so the next step and the unsaved check read the edited text. The
disk changes when the person saves; verification waits for that (`World.unsaved`, then
`verification.verify_when_saved`, then `mission.resume_mission`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.documents import DocumentEvents
from deepseek_ls.lsp.edits import (
    FileEdit,
    buffer_problem,
    changed,
    contradiction,
    file_edit,
    patch_store,
    pinned_version,
    settled_elsewhere,
)
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.transport.client_requests import ClientRequestFailed
from deepseek_ls.lsp.uris import open_document

log = logging.getLogger(__name__)

# How long an apply waits for the editor to send the edited buffers back (didOpen / didChange).
# Not skipped on `applied: true` although the resulting text is known: the server's copy of a buffer
# (incremental sync) only moves by the editor's own didChange, which describes this same edit against
# the old version, so setting the text here would apply it twice; and the next versioned edit needs
# the version the editor gave the buffer, which only that didChange says.
CATCH_UP_SECONDS = 5.0


def combine(edits: list[types.WorkspaceEdit]) -> types.WorkspaceEdit:
    """One edit of several files' edits (all built for the same client, so all of one shape)."""
    if any(e.document_changes is not None for e in edits):
        return types.WorkspaceEdit(document_changes=[c for e in edits for c in (e.document_changes or [])])
    return types.WorkspaceEdit(changes={uri: list(te) for e in edits for uri, te in (e.changes or {}).items()})


async def apply_patch(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str] | None = None) -> Any:
    """Apply the patch's pending hunks (or `hunk_ids`) in the editor, all files or none; one
    apply per file at a time (`buffer_sync`), as an accepted hunk is."""
    patch = patch_store(ls).get(patch_id)
    files = sorted({patch.hunk(h).file for h in hunk_ids} if hunk_ids else {h.file for h in patch.pending_hunks()})
    async with ls.feature_state(BufferSync).locks(files):
        return await _apply_patch(ls, patch_id, hunk_ids)


async def _apply_patch(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str] | None) -> Any:
    from deepseek_ls.patch import ApplyResult, FileOutcome

    patch = patch_store(ls).get(patch_id)
    sync = ls.feature_state(BufferSync)
    groups, settled = patch.chosen_by_file(hunk_ids)
    if settled:  # rejected (or applied) while this apply waited for its files
        return ApplyResult(ok=False, patch_id=patch_id, message="nothing was applied: " + "; ".join(settled))
    if not groups:
        return ApplyResult(ok=True, patch_id=patch_id, message="no pending hunks to apply")
    problems = [f"{file}: {problem}" for file in groups
                if (problem := await buffer_problem(ls, ls.uri_of(file))) is not None]
    if problems:
        return ApplyResult(ok=False, patch_id=patch_id, message="nothing was applied:\n" + "\n".join(problems))
    prepared = [file_edit(ls, patch, ids, file) for file, ids in groups.items()]
    outcomes = [FileOutcome(file=p.file, ok=p.edit is not None, kind=patch.changes[p.file].kind,
                            hunk_ids=groups[p.file], conflict=p.refusal or None, merged=p.merged) for p in prepared]
    refused = [p for p in prepared if p.edit is None]
    if refused:
        return ApplyResult(ok=False, patch_id=patch_id, files=outcomes,
                           message="nothing was applied:\n" + "\n".join(p.refusal for p in refused))
    ids = [h for file_ids in groups.values() for h in file_ids]
    params = types.ApplyWorkspaceEditParams(edit=combine([p.edit for p in prepared if p.edit is not None]),
                                            label=f"deepseek: {len(ids)} hunk(s) in {', '.join(groups)}")
    try:
        response = await ls.workspace_apply_edit_async(params)
    except ClientRequestFailed as error:
        if error.answer_unknown:  # it may apply the edit yet: the next apply waits for the buffers
            for p in prepared:
                sync.unanswered_edit(p.uri, p.new_text, error.reason, pinned_version(p.edit, p.uri))
        return ApplyResult(ok=False, patch_id=patch_id, files=outcomes, message=(
            f"the editor gave no usable answer to the edit of {', '.join(groups)} ({error.reason}); nothing was recorded"))
    if not response.applied:
        reason = response.failure_reason or "the editor refused the edit"
        return ApplyResult(ok=False, patch_id=patch_id, files=outcomes,
                           message=f"the editor did not apply the edit of {', '.join(groups)} ({reason})")
    if (doubt := contradiction(response)) is not None:
        for p in prepared:
            sync.applied(p.uri, p.new_text)  # it may have: the next apply waits for the buffers
        return ApplyResult(ok=False, patch_id=patch_id, files=outcomes, message=(
            f"the editor answered that it applied the edit of {', '.join(groups)} and that it failed ({doubt}); "
            "nothing was recorded"))
    for p in prepared:
        sync.applied(p.uri, p.new_text)
    checkpoint_id = await asyncio.to_thread(_checkpoint, ls, patch_id, ids, prepared)
    settled = patch_store(ls).record_applied(patch_id, ids, via="workspace/applyEdit", checkpoint_id=checkpoint_id)
    await caught_up(ls, prepared)
    changed(ls, list(groups))
    if settled:  # another process settled some hunks meanwhile: the apply's outcome is not all ours
        return ApplyResult(ok=False, patch_id=patch_id, applied=[h for h in ids if h not in settled], files=outcomes,
                           message=settled_elsewhere(", ".join(groups), settled))
    merged = [p.file for p in prepared if p.merged]
    return ApplyResult(ok=True, patch_id=patch_id, applied=ids, files=outcomes, message=(
        f"applied {len(ids)} hunk(s) to {len(groups)} file(s) in the editor"
        + (f" (rebased onto your edits in {', '.join(merged)})" if merged else "")))


def _checkpoint(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str], prepared: list[FileEdit]) -> str:
    """Snapshot what the edit was made against (the buffers, unsaved typing included) and what the
    editor's buffers became, as a disk apply's checkpoint does: undo (`lsp/editor_undo.py`) takes the
    apply out of the buffers three-way from these."""
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    for p in prepared:
        source = p.source or p.file
        before[source] = p.old_text
        after[p.file] = p.new_text
        if source != p.file:
            before.setdefault(p.file, None)
            after[source] = None  # renamed away
    files = sorted({*before, *after})
    store = patch_store(ls)
    checkpoint_id = store.checkpoints.create(files, label=f"before applying {patch_id} in the editor",
                                             meta={"patch_id": patch_id, "hunk_ids": hunk_ids,
                                                   "via": "workspace/applyEdit"}, texts=before)
    store.checkpoints.record_after(checkpoint_id, files, texts=after)
    return checkpoint_id


def _shows(ls: DeepSeekServer, p: FileEdit) -> bool:
    """Whether the server's copy of the file (open buffer, else disk) shows the applied text."""
    doc = open_document(ls, p.uri)
    if doc is not None:
        return p.new_text is None or doc.source == p.new_text
    from deepseek_ls.patch.overlay import read_disk_text

    try:
        return read_disk_text(ls.root / p.file) == p.new_text
    except (OSError, UnicodeDecodeError):
        return p.new_text is None


async def caught_up(ls: DeepSeekServer, prepared: list[FileEdit], timeout: float = CATCH_UP_SECONDS) -> bool:
    """Wait (event-driven, bounded) until every file shows its applied text. An editor that does
    not send the buffers back is not waited for longer: the 3-way merge of the next apply still
    keeps whatever it holds."""
    if all(_shows(ls, p) for p in prepared):
        return True
    event = asyncio.Event()

    def listener(uri: str) -> None:
        event.set()

    listeners = ls.feature_state(DocumentEvents).on_change
    listeners.append(listener)
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while not all(_shows(ls, p) for p in prepared):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                log.warning("the editor did not send back %s after applying them",
                            ", ".join(p.file for p in prepared if not _shows(ls, p)))
                return False
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        return True
    finally:
        listeners.remove(listener)
