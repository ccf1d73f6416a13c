"""Staged hunks as editor edits: accept → `workspace/applyEdit`, reject, per file
or all, and the `deepseek/hunks` request.

Accepting computes the file's text after the chosen hunks from the *current*
buffer (`PatchStore.merge_hunks`, 3-way when the buffer moved), sends only the
lines that differ as a `TextDocumentEdit` versioned with the buffer's current
version, and records the hunks as applied only when the client says it applied
them. A conflict or a refusal changes nothing and says why.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from deepseek_ls.store.ids import new_id
from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.approvals import ApprovalBroker
from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.hunk_views import HunkView, HunkViews
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import patch_info, refresh_lenses, sessions_of
from deepseek_ls.lsp.transport.client_requests import ClientRequestFailed
from deepseek_ls.lsp.uris import aliases, current_text, open_document, uri_to_relpath
from deepseek_ls.lsp.workspace_edit import FileTarget, UnsupportedEdit
from deepseek_ls.lsp.workspace_edit import build as build_edit
from deepseek_ls.workspace import STATE_DIR_NAME

log = logging.getLogger(__name__)


@dataclass
class HunkState:
    """The hunks feature's state of one connection (`DeepSeekServer.feature_state`): the cached
    positions of staged hunks, and who is told when a patch's hunks were accepted or rejected
    (the plan flow verifies steps: `verification.py`)."""

    views: HunkViews | None = None  # built on first use (a lens must not start the agent)
    settled_listeners: list[Callable[[str], Awaitable[None]]] = field(default_factory=list)
    # Told the files whose hunks changed state (staged, accepted, rejected): hunk diagnostics.
    changed_listeners: list[Callable[[list[str]], None]] = field(default_factory=list)


def patch_store(ls: DeepSeekServer) -> Any:
    if ls.services is None:
        raise RuntimeError("the server is not initialized")
    return ls.services.patches


def hunk_views(ls: DeepSeekServer) -> HunkViews:
    state = ls.feature_state(HunkState)
    views = state.views
    if views is None:
        store = patch_store(ls)
        views = state.views = HunkViews(store.list, Path(store.dir))
    return views


def text_key(ls: DeepSeekServer, uri: str) -> Any:
    """Identifies the text of `uri` for caching: buffer version, else file mtime."""
    doc = open_document(ls, uri)
    if doc is not None:
        return ("buffer", doc.version, len(doc.source))
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    try:
        stat = (ls.root / rel).stat() if rel else None
        return ("disk", stat.st_mtime_ns, stat.st_size) if stat else None
    except OSError:
        return ("missing",)


def _ever_staged(ls: DeepSeekServer) -> bool:
    return ls.feature_state(HunkState).views is not None or (ls.root / STATE_DIR_NAME / "patches").is_dir()


def patches_signature(ls: DeepSeekServer) -> Any:
    """Changes whenever the staged patches change (None: nothing ever staged)."""
    return hunk_views(ls).signature() if _ever_staged(ls) else None


def views_for_uri(ls: DeepSeekServer, uri: str, *, include_settled: bool = False) -> list[HunkView]:
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    if rel is None:
        return []
    if not _ever_staged(ls):
        return []  # do not start the agent for a lens
    views = hunk_views(ls)
    if not include_settled and rel not in views.files():
        return []
    text, _ = current_text(ls, uri)
    return views.for_file(rel, text, text_key(ls, uri), include_settled=include_settled)


def changed(ls: DeepSeekServer, files: list[str]) -> None:
    """Hunks changed state: drop caches, tell the client, refresh lenses."""
    views = ls.feature_state(HunkState).views
    if views is not None:
        views.invalidate()
    uris = [ls.uri_of(f) for f in sorted(set(files))]
    ls.notify(names.NOTIFY_HUNKS_CHANGED, {"uris": uris})
    refresh_lenses(ls)
    for listener in ls.feature_state(HunkState).changed_listeners:
        try:
            listener(sorted(set(files)))
        except Exception:  # noqa: BLE001 - the lenses and the notification went out; logged
            log.exception("hunk listener failed")



# -- accepting -----------------------------------------------------------------


@dataclass
class FileEdit:
    """A file's chosen hunks as an editor edit against the text the person sees now."""

    file: str
    uri: str
    version: int | None
    edit: types.WorkspaceEdit | None
    merged: bool = False  # rebased onto the person's edits (3-way)
    refusal: str = ""  # why it cannot be applied (then `edit` is None)
    new_text: str | None = None  # the buffer's text once the editor applied `edit` (None: the file goes)
    old_text: str | None = None  # the text `edit` was made against (buffer, else disk; None: no such file)
    source: str = ""  # the path whose text that is (a rename's old path)


def file_edit(ls: DeepSeekServer, patch: Any, hunk_ids: list[str], file: str) -> FileEdit:
    """The `WorkspaceEdit` applying `hunk_ids` (all in `file`) onto the current buffer (else disk):
    directly when the text is as staged, 3-way when the person edited it since; a conflict or an
    edit the client cannot express is a refusal, nothing else."""
    store = patch_store(ls)
    target = FileTarget.of(patch, file)
    uri = ls.uri_of(file)
    source_uri = ls.uri_of(target.source) if (ls.root / target.source).exists() else uri
    text, version = current_text(ls, source_uri)
    old_text = text if open_document(ls, source_uri) is not None or (ls.root / target.source).is_file() else None
    merged = store.merge_hunks(patch.patch_id, hunk_ids, file, text)
    if not merged.ok:
        return FileEdit(file, uri, version, None, refusal=(
            f"{file} changed since the hunk was staged and the change conflicts with it. Nothing was modified; "
            f"revise the step or edit by hand.\n{merged.conflict or ''}").strip())
    removes_file = all(h.status == "accepted" or h.hunk_id in hunk_ids for h in patch.hunks_of(file))
    try:
        edit = build_edit(ls, target, version, text, merged.text or "", removes_file=removes_file)
    except UnsupportedEdit as error:
        return FileEdit(file, uri, version, None, refusal=f"{error}.")
    gone = removes_file and target.kind == "delete"
    return FileEdit(file, uri, version, edit, merged=merged.merged, new_text=None if gone else merged.text or "",
                    old_text=old_text, source=target.source)


def contradiction(response: types.ApplyWorkspaceEditResult) -> str | None:
    """Why an `applied: true` answer cannot be taken at its word (it also names a failure: a
    `failureReason`, a `failedChange`), else None. Then nothing is recorded: the buffer may or
    may not hold the edit, and accepting again merges either way (3-way)."""
    if not response.applied or not (response.failure_reason or response.failed_change is not None):
        return None
    return response.failure_reason or f"change {response.failed_change} failed"


def pinned_version(edit: types.WorkspaceEdit | None, uri: str) -> int | None:
    """The document version `edit` names for `uri` (a versioned `TextDocumentEdit`), else None:
    a plain edit, which the editor applies to whatever the buffer holds."""
    for change in (edit.document_changes or []) if edit is not None else []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            return change.text_document.version
    return None


async def buffer_problem(ls: DeepSeekServer, uri: str, then: str = "accept again") -> str | None:
    """Why no edit of `uri` may be computed now (`buffer_sync`: out of sync, or the editor
    has not sent back the previous apply), waiting a little for the latter; None: go ahead.
    `then`: what the person does once the buffer is back (in the message)."""
    from deepseek_ls.lsp.buffer_sync import CATCH_UP_SECONDS
    from deepseek_ls.lsp.transport.client_requests import scaled

    sync = ls.feature_state(BufferSync)
    if open_document(ls, uri) is None:  # the edit would be computed from the disk
        disk = current_text(ls, uri)[0]
        for alias in aliases(ls, uri):
            if ls.workspace.text_documents[alias].source != disk or alias in sync.out_of_sync:
                return (f"the editor has this file open as {alias[:200]}, a URI that names it differently from "
                        f"the server's ({uri[:200]}), and that buffer is not what is on disk. Nothing was sent; "
                        f"open the file under the workspace's path, then {then}.")
    return await sync.ready(uri, lambda: current_text(ls, uri)[0], scaled(CATCH_UP_SECONDS), then)


async def accept_in_file(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str], file: str,
                         *, skip_settled: bool = False) -> dict[str, Any]:
    """Apply `hunk_ids` (all in `file`) through the editor; the result says whether. One
    apply or reject per file at a time (never two edits computed against the same text, never
    a reject answered while the editor may still apply the hunk). A hunk settled meanwhile (a
    second click, a Reject that came first) is an error, or with `skip_settled` (bulk accepts)
    left out and named in the result's `skipped`."""
    async with ls.feature_state(BufferSync).lock(file):
        patch = patch_store(ls).get(patch_id)
        settled = {h: status for h in hunk_ids if (status := patch.hunk(h).status) != "pending"}
        if settled and not skip_settled:
            hunk_id, status = next(iter(settled.items()))
            raise ValueError(f"hunk {hunk_id} is already {status}")
        chosen = [h for h in hunk_ids if h not in settled]
        if not chosen:
            return {"applied": False, "uri": ls.uri_of(file), "hunk_ids": [], "skipped": list(settled),
                    "message": f"nothing to apply in {file}: its hunks were settled meanwhile"}
        result = await _accept_in_file(ls, patch_id, chosen, file)
        if settled:
            result["skipped"] = list(settled)
        return result


async def _accept_in_file(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str], file: str) -> dict[str, Any]:
    store = patch_store(ls)
    patch = store.get(patch_id)
    uri = ls.uri_of(file)
    sync = ls.feature_state(BufferSync)

    def refused(message: str, version: int | None) -> dict[str, Any]:  # nothing applied, nothing recorded
        ls.show_message(message, types.MessageType.Warning)
        return {"applied": False, "uri": uri, "version": version, "message": message, "hunk_ids": hunk_ids}

    if (problem := await buffer_problem(ls, uri)) is not None:
        return refused(f"deepseek-ls: not applied to {file} — {problem}", current_text(ls, uri)[1])
    prepared = file_edit(ls, patch, hunk_ids, file)
    uri, version = prepared.uri, prepared.version

    if prepared.edit is None:
        return refused(f"deepseek-ls: not applied — {prepared.refusal}", version)
    try:
        response = await ls.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=prepared.edit, label=f"deepseek: accept {len(hunk_ids)} hunk(s) in {file}")
        )
    except ClientRequestFailed as error:  # no answer in time, an error, or an answer we cannot read
        if error.answer_unknown:  # it may apply the edit yet: the next apply waits for the buffer
            sync.unanswered_edit(uri, prepared.new_text, error.reason, pinned_version(prepared.edit, uri))
            return refused(
                f"deepseek-ls: not recorded — the editor gave no usable answer to the edit of {file} ({error.reason}), "
                "so it may or may not apply it. Nothing was recorded; check the buffer, then accept again "
                "(once the editor has sent the buffer; a hunk already there is not added twice).", version
            )
        return refused(
            f"deepseek-ls: not applied — the editor gave no usable answer to the edit of {file} ({error.reason}). "
            "Nothing was recorded; check the buffer, then accept again to retry.", version
        )
    if not response.applied:
        reason = response.failure_reason or "the editor refused the edit"
        return refused(
            f"deepseek-ls: the editor did not apply the hunk to {file} ({reason}). Nothing was recorded; "
            "accept again to retry against the current buffer.", version
        )
    if (doubt := contradiction(response)) is not None:
        sync.applied(uri, prepared.new_text)  # it may have: the next apply waits for the buffer
        return refused(
            f"deepseek-ls: the editor answered that it applied the edit of {file} and that it failed ({doubt}). "
            "Nothing was recorded; check the buffer, then accept again (a hunk already there is not added twice).",
            version)
    sync.applied(uri, prepared.new_text)
    settled = store.record_applied(patch_id, hunk_ids, via="workspace/applyEdit")
    if settled:
        changed(ls, [file])
        await _after_settled(ls, patch_id)
        return refused(settled_elsewhere(file, settled), version) | {
            "hunk_ids": [h for h in hunk_ids if h not in settled], "settled_elsewhere": settled}
    log.info("applied %s of %s to %s (version %s, 3-way=%s)", hunk_ids, patch_id, file, version, prepared.merged)
    changed(ls, [file])
    await _after_settled(ls, patch_id)
    result: dict[str, Any] = {"applied": True, "uri": uri, "version": version, "hunk_ids": hunk_ids}
    if prepared.merged:
        result["message"] = "rebased onto your edits (3-way merge)"
    return result


def settled_elsewhere(file: str, settled: dict[str, str]) -> str:
    """What the person is told when the editor applied hunks another process settled meanwhile."""
    accepted = [h for h, status in settled.items() if status == "accepted"]
    rejected = [h for h, status in settled.items() if status != "accepted"]
    parts = [f"deepseek-ls: the editor applied the edit of {file}, but another deepseek-ls process (the CLI "
             "or another editor) settled some of its hunks meanwhile."]
    if accepted:
        parts.append(f"Hunk(s) {', '.join(accepted)} had been applied there: not recorded twice; your buffer holds "
                     "them now, and if that process wrote them to the disk, saving the buffer keeps them once.")
    if rejected:
        parts.append(f"Hunk(s) {', '.join(rejected)} had been rejected there and stay rejected: undo the edit in "
                     "the editor to take them out of the buffer, or keep them by hand.")
    return " ".join(parts)


def reject_pending(store: Any, patch_id: str, hunk_ids: list[str], reason: str) -> list[str]:
    """Reject those of `hunk_ids` still pending when the store's lock is taken (another process
    may have settled some since they were read); the ids rejected."""
    from deepseek_ls.patch import HunkSettled

    remaining = list(hunk_ids)
    while remaining:
        try:
            store.reject(patch_id, remaining, reason=reason)
            return remaining
        except HunkSettled as error:
            remaining = [h for h in remaining if h not in error.statuses]
    return []


async def _after_settled(ls: DeepSeekServer, patch_id: str) -> None:
    """Let the plan flow know (verification when a step's hunks are all settled)."""
    for listener in ls.feature_state(HunkState).settled_listeners:
        try:
            await listener(patch_id)
        except Exception:  # noqa: BLE001 - the edit itself succeeded
            log.exception("patch listener failed for %s", patch_id)


async def confirm_gated(ls: DeepSeekServer, patch: Any, hunk_ids: list[str], files: list[str]) -> str | None:
    """Bulk-accepting a patch the safety gate flagged (too many files or lines)
    needs an explicit approval, even though clicking the lens was a request. A patch
    touching a file that runs code (conftest.py, Makefile, .vscode/, ...) always asks,
    showing that content, whatever was answered before. None when allowed, else why not
    ("approval denied", "approval cancelled", "approval: no answer within 600 s"): the hunks stay pending."""
    if not patch.approval_required or ls.ui is None:
        return None
    approvals = ls.feature_state(ApprovalBroker)
    exec_files = list(getattr(patch, "exec_config_files", []) or [])
    if "patch.apply" in approvals.always and not exec_files:
        return None
    from deepseek_ls.patch.gate import exec_config_content
    from deepseek_ls.policy.approvals import ask_person, said
    from deepseek_ls.ui_port import ApprovalRequest  # pydantic: loaded after start-up

    decision = await ask_person(ls.ui, ApprovalRequest(
            request_id=new_id(),
            kind="patch.apply",
            title=f"Apply {len(hunk_ids)} hunk(s) to {', '.join(files)}?",
            detail="This change needs explicit approval: " + "; ".join(patch.approval_reasons)
            + ("\n" + exec_config_content(patch) if exec_files else ""),
            files=files,
            hunk_ids=hunk_ids,
            patch_id=patch.patch_id,
            session_id=patch.session_id,
        ), ls.config.policy.approval_timeout_seconds)
    if decision.answer == "always_allow" and not exec_files:
        approvals.always.add("patch.apply")
    if decision.allowed:
        return None
    how = said(decision.answer, decision.reason)
    why = f"approval {how}" if decision.answer != "timeout" else f"approval: {how}"
    # The hunks stay pending whatever the refusal: Accept asks again, Reject rejects them.
    ls.show_message(f"deepseek-ls: not applied — {why} for patch {patch.patch_id}; its hunks are still pending.")
    return why


def _group_pending(patch: Any, file: str | None = None) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for hunk in patch.pending_hunks():
        if file is None or hunk.file == file:
            groups.setdefault(hunk.file, []).append(hunk.hunk_id)
    return groups


def _patches_in_scope(ls: DeepSeekServer, patch_id: str | None) -> list[Any]:
    store = patch_store(ls)
    if patch_id:
        return [store.get(patch_id)]
    pending = store.pending()
    active = sessions_of(ls).active
    if active:
        mine = [p for p in pending if p.session_id == active]
        return mine or pending
    return pending


async def accept_hunk(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.HunkArgs, args)
    hunk = patch_store(ls).get(a.patch_id).hunk(a.hunk_id)
    if hunk.status != "pending":
        raise ValueError(f"hunk {a.hunk_id} is already {hunk.status}")
    return await accept_in_file(ls, a.patch_id, [a.hunk_id], hunk.file)


def _refuse_reject_while_an_edit_may_land(ls: DeepSeekServer, files: Iterable[str]) -> None:
    """A Reject is refused (nothing recorded) for a file whose last edit got no usable answer:
    the editor may still apply it, and the hunk, recorded rejected, would then be in the buffer."""
    stuck = {file: reason for file in dict.fromkeys(files)
             if (reason := ls.feature_state(BufferSync).unanswered_reason(ls.uri_of(file))) is not None}
    if stuck:
        named = ", ".join(f"{file} ({reason})" for file, reason in stuck.items())
        raise ValueError(
            f"not rejected: the editor gave no usable answer to an earlier edit of {named}, so it may still "
            "apply it, and a rejected hunk would then be in your buffer. Check the buffer, then reject again "
            "once the editor has sent it (reopen the file if it does not); nothing was recorded")


async def reject_hunk(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.HunkArgs, args)
    store = patch_store(ls)
    file = store.get(a.patch_id).hunk(a.hunk_id).file
    async with ls.feature_state(BufferSync).lock(file):  # an Accept's edit still out: its answer decides first
        status = store.get(a.patch_id).hunk(a.hunk_id).status
        if status != "pending":
            raise ValueError(f"hunk {a.hunk_id} is already {status}")
        _refuse_reject_while_an_edit_may_land(ls, [file])
        store.reject(a.patch_id, [a.hunk_id], reason="rejected in the editor")
    changed(ls, [file])
    await _after_settled(ls, a.patch_id)
    return {"rejected": True, "hunk_ids": [a.hunk_id]}


def _file_of(ls: DeepSeekServer, uri: str) -> str:
    rel = uri_to_relpath(ls.root, uri)
    if rel is None:
        raise ValueError(f"{uri} is outside the workspace {ls.root}")
    return rel


async def accept_file(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.FileArgs, args)
    file = _file_of(ls, a.uri)
    patch = patch_store(ls).get(a.patch_id)
    hunk_ids = _group_pending(patch, file).get(file, [])
    if not hunk_ids:
        raise ValueError(f"patch {a.patch_id} has no pending hunks in {file}")
    refused = await confirm_gated(ls, patch, hunk_ids, [file])
    if refused is not None:
        return {"applied": False, "uri": a.uri, "message": refused, "hunk_ids": hunk_ids}
    return await accept_in_file(ls, a.patch_id, hunk_ids, file, skip_settled=True)


async def reject_file(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.FileArgs, args)
    file = _file_of(ls, a.uri)
    store = patch_store(ls)
    async with ls.feature_state(BufferSync).lock(file):  # the hunks still pending once an Accept's edit is answered
        hunk_ids = _group_pending(store.get(a.patch_id), file).get(file, [])
        if hunk_ids:
            _refuse_reject_while_an_edit_may_land(ls, [file])
        hunk_ids = reject_pending(store, a.patch_id, hunk_ids, "rejected in the editor")
    if hunk_ids:
        changed(ls, [file])
        await _after_settled(ls, a.patch_id)
    return {"rejected": True, "hunk_ids": hunk_ids}


async def accept_all(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.AllArgs, args)
    applied: list[str] = []
    failed: list[dict[str, Any]] = []
    for patch in _patches_in_scope(ls, a.patch_id):
        groups = _group_pending(patch)
        refused = await confirm_gated(ls, patch, [h for ids in groups.values() for h in ids], sorted(groups))
        if refused is not None:
            failed.append({"patch_id": patch.patch_id, "message": refused})
            continue
        for file, hunk_ids in groups.items():
            result = await accept_in_file(ls, patch.patch_id, hunk_ids, file, skip_settled=True)
            if result["applied"]:
                applied.extend(result["hunk_ids"])
            elif result["hunk_ids"]:
                failed.append({"file": file, "hunk_ids": result["hunk_ids"], "message": result.get("message")})
            if result.get("skipped"):
                failed.append({"file": file, "hunk_ids": result["skipped"],
                               "message": "settled meanwhile (rejected or accepted by another command)"})
    return {"applied": applied, "failed": failed}


async def reject_all(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.AllArgs, args)
    store = patch_store(ls)
    rejected: list[str] = []
    files: list[str] = []
    scope = [h.file for patch in _patches_in_scope(ls, a.patch_id) for h in patch.pending_hunks()]
    async with ls.feature_state(BufferSync).locks(scope):  # Accepts whose edits are out are answered first
        _refuse_reject_while_an_edit_may_land(ls, scope)
        for patch in _patches_in_scope(ls, a.patch_id):
            pending = [h for h in patch.pending_hunks() if h.file in scope]
            done = reject_pending(store, patch.patch_id, [h.hunk_id for h in pending], "rejected in the editor")
            rejected.extend(done)
            files.extend(h.file for h in pending if h.hunk_id in done)
    if rejected:
        changed(ls, files)
        for patch in _patches_in_scope(ls, a.patch_id):
            await _after_settled(ls, patch.patch_id)
    return {"rejected": rejected}


# -- deepseek/hunks --------------------------------------------------------------


def _range(start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}


def hunk_json(ls: DeepSeekServer, uri: str, view: HunkView) -> dict[str, Any]:
    start = view.start if view.start is not None else view.expected_start
    end = view.end if view.end is not None else start
    info = patch_info(ls, view.patch_id)
    return {
        "patch_id": view.patch_id,
        "hunk_id": view.hunk_id,
        "uri": uri,
        "range": _range(start, end),
        "old_text": view.old_text,
        "new_text": view.new_text,
        "added": view.added_lines(),
        "removed_at": view.removed_at(),
        "status": view.status,
        "stale": view.start is None and view.status == "pending",
        "located": view.located,
        "recounted": view.recounted,
        "profile": info.get("profile"),
        "decision_id": info.get("decision_id"),
        "session_id": view.session_id,
    }


def hunks_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any]:
    a = params.parse_args(params.UriArgs, raw)
    _, version = current_text(ls, a.uri)
    return {
        "uri": a.uri,
        "version": version,
        "hunks": [hunk_json(ls, a.uri, v) for v in views_for_uri(ls, a.uri)],
    }


def pending_hunks_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any]:
    """Every pending hunk of the workspace (of `session_id` when given), grouped by file."""
    a = params.parse_args(params.OptionalSessionArgs, raw)
    files = []
    for rel in hunk_views(ls).files() if _ever_staged(ls) else []:
        uri = ls.uri_of(rel)
        hunks = [hunk_json(ls, uri, v) for v in views_for_uri(ls, uri)
                 if a.session_id is None or v.session_id == a.session_id]
        if hunks:
            files.append({"uri": uri, "path": rel, "hunks": hunks})
    return {"files": files, "count": sum(len(f["hunks"]) for f in files)}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command, request

    command(server, names.CMD_ACCEPT_HUNK, accept_hunk)
    command(server, names.CMD_REJECT_HUNK, reject_hunk)
    command(server, names.CMD_ACCEPT_FILE, accept_file)
    command(server, names.CMD_REJECT_FILE, reject_file)
    command(server, names.CMD_ACCEPT_ALL, accept_all)
    command(server, names.CMD_REJECT_ALL, reject_all)
    request(server, names.REQ_HUNKS, hunks_request)
    request(server, names.REQ_PENDING_HUNKS, pending_hunks_request)
