"""Undo in the editor: checkpoints (a Hetun mission, `deepseek.undo`) are restored onto the buffers
the person sees, the way the agent's applies land (`editor_apply.py`) — never by writing a file
under an open buffer.

`undo_checkpoints` is the core's `Agent.restorer` in the language server. It computes every file's
text from the buffer as it is now (`PatchStore.plan_undo`: each apply taken out three-way, so what
was typed since stays; an overlap refuses the whole undo naming the files, nothing changed), sends
the open buffers' edits as one versioned `WorkspaceEdit`, and writes a file the editor does not have
open on the disk only while the disk still holds the text the undo was computed from. Like an accept,
it goes through `buffer_sync`: it waits for applies and rejects of its files, and is refused while
any of them is out of sync (the server's copy is not what the person sees). Nothing is
recorded as undone unless the editor applied its part; a refusal puts back what was written.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.edits import FileEdit, buffer_problem, contradiction, patch_store, pinned_version
from deepseek_ls.lsp.editor_apply import caught_up, combine
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.transport.client_requests import ClientRequestFailed
from deepseek_ls.lsp.uris import uri_to_relpath
from deepseek_ls.lsp.workspace_edit import FileTarget, UnsupportedEdit
from deepseek_ls.lsp.workspace_edit import build as build_edit
from deepseek_ls.policy import safe_files

log = logging.getLogger(__name__)


class UndoLock:
    """One undo at a time on a connection (`DeepSeekServer.feature_state`)."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()


@dataclass
class UndoOutcome:
    checkpoint_ids: list[str]
    restored: list[str]  # every file the undone applies covered
    changed: list[str] = field(default_factory=list)  # the files whose text the undo changed
    merged: list[str] = field(default_factory=list)  # of those, where later typing was kept (3-way)
    kept: list[str] = field(default_factory=list)  # changed after a mission's mark with no apply to take out
    in_buffers: list[str] = field(default_factory=list)
    on_disk: list[str] = field(default_factory=list)


class UndoNotApplied(RuntimeError):
    """The undo was not made (a conflict, the editor refused it); nothing was changed."""

    @property
    def user_message(self) -> str:  # an expected outcome, shown as it is (lsp/guard.py)
        return str(self)


def _buffers(ls: DeepSeekServer) -> dict[str, tuple[str, int | None]]:
    """The open buffers under the workspace, by path: their text and version, taken at once."""
    out: dict[str, tuple[str, int | None]] = {}
    for uri, doc in list(ls.workspace.text_documents.items()):
        rel = uri_to_relpath(ls.root, uri) if ls.root else None
        if rel is not None:
            out[rel] = (doc.source, doc.version)
    return out


def _read_disk(ls: DeepSeekServer, rel: str) -> str | None:
    if not (ls.root / rel).is_file():
        return None
    return safe_files.read_text(ls.root, rel)  # not UTF-8: raises, the undo is refused


def _write_disk(ls: DeepSeekServer, rel: str, expected: str | None, text: str | None) -> None:
    """Put `text` (None: remove) in the file, only while it holds `expected` (what the undo was
    computed from): a file changed meanwhile is never overwritten."""
    try:
        now = _read_disk(ls, rel)
    except (OSError, UnicodeDecodeError):
        now = ...  # unreadable: not what was expected
    if now != expected:
        raise UndoNotApplied(f"undo refused, nothing was changed: {rel} changed on disk while the undo was made; "
                             "undo again")
    if text is None:
        from deepseek_ls.patch.checkpoint import remove_empty_parents

        safe_files.unlink(ls.root, rel)
        remove_empty_parents(ls.root / rel, ls.root)
    else:
        safe_files.write_bytes(ls.root, rel, text.encode("utf-8", "surrogatepass"))


async def undo_checkpoints(ls: DeepSeekServer, checkpoint_ids: list[str]) -> UndoOutcome:
    """Undo `checkpoint_ids` (newest first) onto the buffers (open files) and the disk (the others),
    all or nothing. Raises `PatchError` / `UndoNotApplied` with a message naming the files."""
    assert ls.root is not None
    lock = ls.feature_state(UndoLock).lock
    store = patch_store(ls)
    covered = _covered(store, checkpoint_ids)
    async with lock, ls.feature_state(BufferSync).locks(covered):  # after any apply or reject of those files
        problems = [f"{rel}: {problem}" for rel in covered
                    if (problem := await buffer_problem(ls, ls.uri_of(rel), then="undo again"))]
        if problems:  # the text the undo would be computed from is not what the person sees
            raise UndoNotApplied("undo refused, nothing was changed:\n" + "\n".join(problems))
        return await _undo(ls, store, checkpoint_ids)


def _covered(store: Any, checkpoint_ids: list[str]) -> list[str]:
    """Every file the checkpoints hold (what the undo may change), from their manifests."""
    files: set[str] = set()
    for manifest in store.checkpoints.list():
        if manifest.get("checkpoint_id") in checkpoint_ids:
            files.update(entry["path"] for entry in manifest.get("files", []))
            files.update(manifest.get("after", {}) or {})
    return sorted(files)


async def _undo(ls: DeepSeekServer, store: Any, checkpoint_ids: list[str]) -> UndoOutcome:
    buffers = _buffers(ls)
    sync = ls.feature_state(BufferSync)

    def read_now(rel: str) -> str | None:
        return buffers[rel][0] if rel in buffers else _read_disk(ls, rel)

    plan = await asyncio.to_thread(store.plan_undo, checkpoint_ids, read_now)
    prepared: list[FileEdit] = []
    disk = []
    for f in plan.files:
        if f.path not in buffers:
            disk.append(f)
            continue
        text, version = buffers[f.path]
        target = FileTarget(file=f.path, source=f.path, kind="delete" if f.target is None else "modify")
        try:
            edit = build_edit(ls, target, version, text, f.target or "", removes_file=f.target is None)
        except UnsupportedEdit as error:
            raise UndoNotApplied(f"undo refused, nothing was changed: {error}") from None
        prepared.append(FileEdit(f.path, ls.uri_of(f.path), version, edit, new_text=f.target))
    written: list[Any] = []

    def put_back() -> None:
        for f in reversed(written):
            try:
                _write_disk(ls, f.path, f.target, f.now)
            except Exception:  # noqa: BLE001 - changed again meanwhile: theirs, left alone
                log.warning("could not put %s back after a refused undo", f.path)

    try:
        for f in disk:
            await asyncio.to_thread(_write_disk, ls, f.path, f.now, f.target)
            written.append(f)
    except (OSError, UnicodeDecodeError) as error:
        put_back()
        raise UndoNotApplied(f"undo refused, nothing was changed: {error}") from None
    except UndoNotApplied:
        put_back()
        raise
    if prepared:
        files = ", ".join(p.file for p in prepared)
        params = types.ApplyWorkspaceEditParams(edit=combine([p.edit for p in prepared if p.edit is not None]),
                                                label=f"deepseek: undo {files}")
        try:
            response = await ls.workspace_apply_edit_async(params)
        except ClientRequestFailed as error:
            put_back()
            if error.answer_unknown:  # it may apply the edit yet: the next apply waits for the buffers
                for p in prepared:
                    sync.unanswered_edit(p.uri, p.new_text, error.reason, pinned_version(p.edit, p.uri))
            raise UndoNotApplied(f"undo not made: the editor gave no usable answer to the edit of {files} "
                                 f"({error.reason}); nothing was changed") from None
        if not response.applied:
            put_back()
            reason = response.failure_reason or "the editor refused the edit"
            raise UndoNotApplied(f"undo not made: the editor did not apply the edit of {files} ({reason}); "
                                 "nothing was changed")
        if (doubt := contradiction(response)) is not None:
            put_back()
            for p in prepared:
                sync.applied(p.uri, p.new_text)  # it may have: the next apply waits for the buffers
            raise UndoNotApplied(f"undo not recorded: the editor answered that it applied the edit of {files} and "
                                 f"that it failed ({doubt}); check the buffers, then undo again")
        for p in prepared:
            sync.applied(p.uri, p.new_text)  # the next apply waits for the buffer to come back
    via = "+".join(([("workspace/applyEdit")] if prepared else []) + (["disk"] if disk else [])) or "none"
    await asyncio.to_thread(store.finish_undo, plan, via)
    if prepared:
        await caught_up(ls, prepared)
    log.info("undid %s: %s in the editor, %s on disk, kept %s", plan.checkpoint_ids,
             [p.file for p in prepared], [f.path for f in disk], plan.kept)
    return UndoOutcome(checkpoint_ids=plan.checkpoint_ids, restored=plan.restored,
                       changed=[f.path for f in plan.files], merged=[f.path for f in plan.files if f.merged],
                       kept=plan.kept, in_buffers=[p.file for p in prepared], on_disk=[f.path for f in disk])
