"""Applying and undoing changes through the ACP client's files (`client_files.ClientFiles`).

`apply_through_client` is the core's `World.applier` in an ACP session whose client offers its
files, as `lsp/editor_apply.py` is in the language server: every file's text is merged at apply time
against what the client shows now (`fs/read_text_file`: its buffer, unsaved typing included, three-way
when it changed since the patch was staged; a conflict applies nothing) and written with
`fs/write_text_file`, never onto the disk behind it. All files or none: a write the client refuses
puts back what this apply wrote and answers a refused change (`ApplyResult.refused`), which the loop
records as rejected and pauses on. ACP has no delete: a deleted file, or a renamed file's old name, is
removed on the disk. `undo_latest` (`/undo`) takes the latest apply back the same way.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from deepseek_ls.acp.client_files import ClientFileError, ClientFiles
from deepseek_ls.patch.model import ApplyResult, FileOutcome, PatchError, PatchSet
from deepseek_ls.patch.store import PatchStore
from deepseek_ls.policy import safe_files

log = logging.getLogger(__name__)
VIA = "fs/write_text_file"


async def apply_through_client(store: PatchStore, files: ClientFiles, patch_id: str,
                               hunk_ids: list[str] | None = None) -> ApplyResult:
    """Apply the patch's pending hunks (or `hunk_ids`) through the client, all files or none."""
    ps = await asyncio.to_thread(store.get, patch_id)
    groups, settled = ps.chosen_by_file(hunk_ids)
    if settled:
        return ApplyResult(ok=False, patch_id=patch_id, message="nothing was applied: " + "; ".join(settled))
    if not groups:
        return ApplyResult(ok=True, patch_id=patch_id, message="no pending hunks to apply")
    before: dict[str, str | None] = {}
    try:
        for file in groups:
            before[_source(ps, file)] = await _shown(files, ps, file)
    except ClientFileError as exc:
        return ApplyResult(ok=False, refused=True, patch_id=patch_id, message=f"{exc}; nothing was written")
    outcomes, after = _merged(store, ps, groups, before)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        return ApplyResult(ok=False, patch_id=patch_id, files=outcomes,
                           message="nothing was applied:\n" + "\n".join(o.conflict or o.file for o in failed))
    try:
        await _write_all(files, after, before)
    except ClientFileError as exc:
        return ApplyResult(ok=False, refused=True, patch_id=patch_id, files=outcomes,
                           message=f"{exc}; nothing was written")
    ids = [h for file_ids in groups.values() for h in file_ids]
    checkpoint_id = await asyncio.to_thread(_checkpoint, store, patch_id, ids, before, after)
    elsewhere = await asyncio.to_thread(store.record_applied, patch_id, ids, via=VIA, checkpoint_id=checkpoint_id)
    merged = [o.file for o in outcomes if o.merged]
    return ApplyResult(
        ok=not elsewhere, patch_id=patch_id, applied=[h for h in ids if h not in elsewhere], files=outcomes,
        checkpoint_id=checkpoint_id,
        message=(f"applied {len(ids)} hunk(s) to {len(groups)} file(s) through the editor"
                 + (f" (rebased onto your edits in {', '.join(merged)})" if merged else "")
                 + (f"; hunk(s) {', '.join(elsewhere)} were settled by another process meanwhile" if elsewhere else "")))


def _source(ps: PatchSet, file: str) -> str:
    return ps.changes[file].old_path or file


async def _shown(files: ClientFiles, ps: PatchSet, file: str) -> str | None:
    """What the person sees of the file the change starts from; None: it does not exist (an add)."""
    source = _source(ps, file)
    if ps.changes[file].kind == "add" and not (files.root / source).exists():
        return None
    return await files.aread(source)


def _merged(store: PatchStore, ps: PatchSet, groups: dict[str, list[str]],
            before: dict[str, str | None]) -> tuple[list[FileOutcome], dict[str, str | None]]:
    """Each file's outcome and its text after the apply (None: the file goes, as a deletion or a
    rename's old name); conflicts are recorded by `merge_hunks`."""
    outcomes: list[FileOutcome] = []
    after: dict[str, str | None] = {}
    for file, ids in groups.items():
        change = ps.changes[file]
        merged = store.merge_hunks(ps.patch_id, ids, file, before[_source(ps, file)] or "")
        outcomes.append(FileOutcome(file=file, ok=merged.ok, kind=change.kind, hunk_ids=ids,
                                    conflict=merged.conflict, merged=merged.merged))
        if not merged.ok:
            continue
        others_done = all(h.status == "accepted" or h.hunk_id in ids for h in ps.hunks_of(file))
        gone = change.kind == "delete" and others_done and not merged.text
        after[file] = None if gone else merged.text
        if change.old_path and change.old_path != file:
            after[change.old_path] = None
    return outcomes, after


async def _write_all(files: ClientFiles, after: dict[str, str | None], before: dict[str, str | None]) -> None:
    """Write (or remove) every file; when one is refused, put back those done and raise."""
    done: list[str] = []
    try:
        for rel, text in after.items():
            if text is None:
                await asyncio.to_thread(safe_files.unlink, files.root, rel)  # ACP has no delete
            else:
                await files.awrite(rel, text)
            done.append(rel)
    except (ClientFileError, OSError):
        for rel in reversed(done):
            try:
                await _put_back(files, rel, before.get(rel))
            except (ClientFileError, OSError) as exc:
                log.warning("could not put %s back after a refused write: %s", rel, exc)
        raise


async def _put_back(files: ClientFiles, rel: str, text: str | None) -> None:
    if text is None:
        await asyncio.to_thread(safe_files.unlink, files.root, rel)
    elif (files.root / rel).exists():
        await files.awrite(rel, text)
    else:  # removed by this apply
        await asyncio.to_thread(safe_files.write_bytes, files.root, rel, text.encode("utf-8", "surrogatepass"))


def _checkpoint(store: PatchStore, patch_id: str, hunk_ids: list[str], before: dict[str, str | None],
                after: dict[str, str | None]) -> str:
    """Snapshot what the apply was made against (the client's buffers) and what they became, as a
    disk apply's checkpoint does: `/undo` and `deepseek-ls apply --undo` take it back from these."""
    paths = sorted({*before, *after})
    checkpoint_id = store.checkpoints.create(paths, label=f"before applying {patch_id} through the editor",
                                             meta={"patch_id": patch_id, "hunk_ids": hunk_ids, "via": VIA},
                                             texts={p: before.get(p) for p in paths})
    store.checkpoints.record_after(checkpoint_id, paths, texts={p: after.get(p, before.get(p)) for p in paths})
    return checkpoint_id


def undo_latest(agent: Any, files: ClientFiles | None) -> str:
    """`/undo`: take back the latest apply that is not undone yet (the workspace's, as `deepseek-ls
    apply --undo`), three-way against the text as it is now, so what was typed since stays; an
    overlap refuses it, nothing changed. With the client's files the text is read from and written
    through it (a file the apply created is removed from the disk); else the disk. Blocking (client
    calls from a worker thread): run it with `asyncio.to_thread`. Returns what to tell."""
    store = agent.patches
    latest = store.checkpoints.latest_unrestored()
    if latest is None:
        return "Nothing to undo: every applied change is already undone."
    try:
        if files is None:
            plan = store.undo_on_disk([latest])
            assert plan is not None
            via = "disk"
        else:
            plan = store.plan_undo([latest], lambda rel: _now(files, rel))
            _write_undo(files, plan.files)
            via = VIA
            store.finish_undo(plan, via)
    except (PatchError, OSError) as exc:
        return f"[undo refused] {exc}"
    merged = [f.path for f in plan.files if f.merged]
    lines = [f"Undid the latest apply ({', '.join(plan.restored) or 'no file'}) through {via}."]
    if merged:
        lines.append(f"Edits made since were kept in {', '.join(merged)}.")
    if plan.kept:
        lines.append(f"Left as they are (changed since, nothing of the apply to take out): {', '.join(plan.kept)}.")
    return "\n".join(lines)


def undo_through_client(patches: Any, files: ClientFiles, checkpoint_ids: list[str]) -> Any:
    """The agent's restorer under a client that offers its files (a rewind, a mission undo): the
    checkpoints taken out 3-way against the text the person sees, written through the client, all or
    nothing. Blocking (run it with `asyncio.to_thread`). Returns the `UndoPlan` with `changed`."""
    plan = patches.plan_undo(checkpoint_ids, lambda rel: _now(files, rel))
    _write_undo(files, plan.files)
    patches.finish_undo(plan, VIA)
    plan.changed = [f.path for f in plan.files]
    return plan


def _write_undo(files: ClientFiles, changes: list[Any]) -> None:
    """Each file's restored text through the client (a removal on the disk), all or nothing: a
    write the client refuses puts back what was written and refuses the undo."""
    written: list[Any] = []
    try:
        for f in changes:
            if f.target is None:
                if _now(files, f.path) != f.now:
                    raise PatchError(f"{f.path} changed while undoing; nothing was changed")
                safe_files.unlink(files.root, f.path)
            else:
                files.write(f.path, f.target)
            written.append(f)
    except (PatchError, OSError) as exc:
        for f in reversed(written):
            try:
                if f.now is None:
                    safe_files.unlink(files.root, f.path)
                elif f.target is None:
                    safe_files.write_bytes(files.root, f.path, f.now.encode("utf-8", "surrogatepass"))
                else:
                    files.write(f.path, f.now)
            except OSError:
                log.warning("could not put %s back after a refused undo", f.path)
        if isinstance(exc, ClientFileError):
            raise PatchError(f"{exc}; nothing was changed") from exc
        raise


def _now(files: ClientFiles, rel: str) -> str | None:
    """The text the person sees of `rel` (None: no such file)."""
    return files.read(rel) if (files.root / rel).exists() else None
