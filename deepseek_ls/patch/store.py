"""`PatchStore`: stage unified diffs as PatchSets, merge, apply, reject, undo.

Patch sets are persisted under `.deepseek/patches/<patch_id>.json` (atomic
writes under a file lock) so the CLI, a resumed session and the language
server all see the same state. Every state change is an event on the sink.
Nothing is written to a user file except by `apply`, which checkpoints first
and writes nothing at all when any selected file conflicts.

Each file is sealed with this user's key (`seal.py`) and only sealed files are
read back: a repository can commit `.deepseek/patches/`, and a file there would
otherwise be offered (lenses, `deepseek-ls diff|apply`) as the agent's own
proposal, provenance and all. A file that is not ours (unsealed, sealed by
another user, altered, or copied to another name) is left where it is,
skipped by `list()` with a log line, refused by `get()` saying why, and named
by `ignored()`.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock

from deepseek_ls.patch.checkpoint import (
    CheckpointStore,
    UndoPlan,
    UndoRefused,
    remove_empty_parents,
)
from deepseek_ls.patch.gate import SafetyGate
from deepseek_ls.patch.hunks import apply_hunks, find_block, split_lines
from deepseek_ls.patch.merge import merge_three_way
from deepseek_ls.patch.model import (
    ApplyResult,
    FileChange,
    FileOutcome,
    Hunk,
    MergeResult,
    PatchError,
    PatchSet,
)
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.patch.parse import parse_diff
from deepseek_ls.patch.staging import locate_file_change
from deepseek_ls.patch.validate import validate_files
from deepseek_ls.policy import safe_files
from deepseek_ls.policy.paths import PathPolicy
from deepseek_ls.policy.secret_files import check_not_secret
from deepseek_ls.sink import EventSink, NullSink
from deepseek_ls.store import seal

log = logging.getLogger(__name__)


class NotOurPatch(PatchError):
    """A file in `.deepseek/patches/` that this user's deepseek-ls did not stage (`reason` says how
    it tells): it is never listed, shown or applied."""

    def __init__(self, patch_id: str, reason: str) -> None:
        super().__init__(
            f"ignored .deepseek/patches/{patch_id}.json: not a patch deepseek-ls staged for this user, "
            f"since {reason}; nothing from it is shown or applied (ask for the change again to stage it)"
        )
        self.patch_id = patch_id
        self.reason = reason


class HunkSettled(PatchError):
    """A hunk state change found a hunk no longer pending (settled by another click, process or
    client meanwhile); nothing was changed."""

    def __init__(self, patch_id: str, statuses: dict[str, str], wanted: str) -> None:
        self.patch_id = patch_id
        self.statuses = statuses  # hunk id -> its status now
        self.wanted = wanted
        named = ", ".join(f"hunk {hid} is already {'applied' if status == 'accepted' else status}"
                          for hid, status in statuses.items())
        hint = ("; `deepseek-ls apply --undo` reverts the last apply"
                if wanted == "rejected" and "accepted" in statuses.values() else "")
        super().__init__(f"{named} (nothing was changed){hint}")


class PatchStore:
    def __init__(
        self,
        root: Path,
        state_dir: Path,
        *,
        policy: PathPolicy,
        overlay: DocumentOverlay | None = None,
        sink: EventSink | None = None,
        gate: SafetyGate | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.state_dir = Path(state_dir)
        self.dir = self.state_dir / "patches"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.policy = policy
        self.overlay = overlay if overlay is not None else DocumentOverlay(self.root)
        self.sink = sink if sink is not None else NullSink()
        self.gate = gate if gate is not None else SafetyGate()
        self.checkpoints = CheckpointStore(self.root, self.state_dir)
        self._lock = FileLock(str(self.dir / ".lock"))
        # file name -> (stat key, its text, why it is not ours or None)
        self._cache: dict[str, tuple[tuple[int, ...], str, str | None]] = {}

    # -- staging -----------------------------------------------------------

    def stage(
        self,
        diff_text: str,
        *,
        session_id: str | None = None,
        allowed_files: list[str] | None = None,
        persist: bool = True,
    ) -> PatchSet:
        """Validate `diff_text`, locate its hunks against the current base (buffer if open, else
        disk) and persist it as a pending PatchSet. Raises `PatchError` listing every problem.
        With `persist=False` only validates (`apply --check`): nothing is stored or emitted."""
        diff_bytes = len(diff_text.encode("utf-8", "surrogatepass"))
        self.gate.check_size(diff_bytes)
        # A "modify" without hunks is a mode-only change: nothing to do to the text.
        parsed = [f for f in parse_diff(diff_text) if f.hunks or f.kind != "modify" or f.binary]
        if not parsed:
            raise PatchError("the diff changes no file content (mode-only changes are not applied)")
        problems = validate_files(parsed, self.policy, allowed_files)
        if problems:
            raise PatchError(_problem_message(problems), problems)
        changes: dict[str, FileChange] = {}
        hunks: list[Hunk] = []
        missing: list[str] = []
        failed: list[tuple[str, int]] = []
        for f in parsed:
            try:
                change, file_hunks = locate_file_change(
                    f, policy=self.policy, overlay=self.overlay, root=self.root, taken={h.hunk_id for h in hunks}
                )
            except PatchError as exc:
                problems.extend(f"{f.path}: {p}" for p in exc.problems)
                missing.extend(exc.missing_paths)
                failed.extend(exc.failed_hunks)
                continue
            changes[change.path] = change
            hunks.extend(file_hunks)
        if problems:
            raise PatchError(_problem_message(problems), problems, missing, failed)
        files = list(changes)
        ps = PatchSet(
            patch_id=f"{int(time.time() * 1000):x}-{secrets.token_hex(3)}",
            created_at=datetime.now(timezone.utc).isoformat(),
            session_id=session_id,
            diff=diff_text,
            files=files,
            base_sha256={p: c.base_sha256 for p, c in changes.items()},
            changes=changes,
            hunks=hunks,
        )
        ps.exec_config_files = self.gate.exec_config_paths(
            sorted({*files, *(c.old_path for c in changes.values() if c.old_path)})
        )
        ps.approval_reasons = self.gate.approval_reasons(len(files), ps.loc, diff_bytes, paths=ps.exec_config_files)
        ps.approval_required = bool(ps.approval_reasons)
        if not persist:
            return ps
        with self._lock:
            self._save(ps)
        self.sink.emit(
            "PatchStaged@v1",
            {
                "patch_id": ps.patch_id,
                "files": files,
                "hunks": [h.model_dump(include=_HUNK_SUMMARY) for h in hunks],
                "diff": diff_text,
                "session_id": session_id,
                "approval_required": ps.approval_required,
            },
        )
        return ps

    # -- queries -----------------------------------------------------------

    def get(self, patch_id: str) -> PatchSet:
        """The staged patch `patch_id`; `PatchError` when there is none, `NotOurPatch` (saying why)
        when the file there was not staged by this user's deepseek-ls."""
        path = self._path(patch_id)
        try:
            return self._load(path)
        except FileNotFoundError:
            raise PatchError(f"no staged patch {patch_id!r}; `deepseek-ls diff` lists staged patches") from None

    def list(self) -> list[PatchSet]:
        """Our staged patches, oldest first; files that are not ours are skipped (logged once)."""
        out = []
        for path in self.dir.glob("*.json"):
            try:
                out.append(self._load(path))
            except (OSError, ValueError):
                continue  # a file being replaced, or not ours
        return sorted(out, key=lambda p: (p.created_at, p.patch_id))

    def ignored(self) -> list[NotOurPatch]:
        """The files in `.deepseek/patches/` that `list()` skips as not ours, each saying why."""
        out = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                self._load(path)
            except NotOurPatch as exc:
                out.append(exc)
            except (OSError, ValueError):
                continue
        return out

    def _load(self, path: Path) -> PatchSet:
        """Parse a patch file, only if it is ours (sealed with this user's key under its own name);
        its text and verdict are reused while its stat is unchanged (the language server lists
        pending patches on every code-lens request). Every call returns a fresh PatchSet: callers
        change statuses before saving."""
        key = _file_key(path)
        cached = self._cache.get(path.name)
        if cached is None or cached[0] != key:
            text = path.read_text(encoding="utf-8")
            cached = (key, text, _why_not_ours(text, path.stem, seal.workspace_id(self.root)))
            self._cache[path.name] = cached
            if cached[2] is not None:
                log.warning("%s", NotOurPatch(path.stem, cached[2]))
        if cached[2] is not None:
            raise NotOurPatch(path.stem, cached[2])
        ps = PatchSet.model_validate_json(cached[1])
        if '"workspace"' not in cached[1] and seal.is_legacy(json.loads(cached[1])):
            # Ours, sealed before seals named the workspace: bind it to this one. Under the store's
            # lock and only if the file is still what was read: another process may have changed a
            # hunk's state meanwhile, and saving this copy would undo that (an accepted hunk pending
            # again, applied twice).
            try:
                with self._lock:
                    if _file_key(path) == key:
                        self._save(ps)
            except OSError:
                pass
        return ps

    def pending(self) -> list[PatchSet]:
        return [p for p in self.list() if p.pending_hunks()]

    def current_range(self, patch_id: str, hunk_id: str, current_text: str) -> tuple[int, int] | None:
        """0-based [start, end) lines of the hunk's old text in `current_text`, nearest its base
        position; None when the text no longer contains it (the hunk would need a 3-way merge)."""
        hunk = self.get(patch_id).hunk(hunk_id)
        old = split_lines(hunk.old_text)
        start = find_block(split_lines(current_text), old, hunk.start_index)
        return None if start is None else (start, start + len(old))

    # -- merging and applying ---------------------------------------------

    def merge_hunks(self, patch_id: str, hunk_ids: list[str], file: str, current_text: str) -> MergeResult:
        """The text of `file` after applying `hunk_ids` onto `current_text` (the buffer as it is
        now, which may already hold earlier accepted hunks or the user's typing). Directly when
        the text is as expected, else 3-way; on conflict `ok=False` with a readable report.
        For a rename `file` is the new path and `current_text` the text at `changes[file].old_path`;
        for a deletion whose hunks are all accepted the result is "" (the caller deletes the file)."""
        ps = self.get(patch_id)
        result = self._merge(ps, file, hunk_ids, current_text)
        if not result.ok:
            self.sink.emit(
                "PatchConflict@v1",
                {"patch_id": patch_id, "file": file, "reason": result.conflict or "", "hunk_ids": list(hunk_ids)},
            )
        return result

    def _merge(self, ps: PatchSet, file: str, hunk_ids: list[str], current_text: str) -> MergeResult:
        change = ps.changes.get(file)
        if change is None:
            raise PatchError(f"patch {ps.patch_id} does not change {file!r}; it changes {ps.files}")
        chosen = [ps.hunk(h) for h in hunk_ids]
        for hunk in chosen:
            if hunk.file != file:
                raise PatchError(f"hunk {hunk.hunk_id} belongs to {hunk.file}, not {file}")
        base = change.base_text or ""
        accepted = [h for h in ps.hunks_of(file) if h.status == "accepted" and h.hunk_id not in hunk_ids]
        prior = apply_hunks(base, accepted)
        target = apply_hunks(base, accepted + chosen)
        if current_text in (prior, target):
            return MergeResult(ok=True, text=target)
        three = merge_three_way(prior, current_text, target, label=file)
        if three.ok:
            return MergeResult(ok=True, text=three.text, merged=True)
        return MergeResult(ok=False, conflict=three.report, merged=True)

    def apply(
        self, patch_id: str, hunk_ids: list[str] | None = None, files: list[str] | None = None
    ) -> ApplyResult:
        """Apply pending hunks (all, or those chosen by id and/or file) to disk. Checkpoints the
        touched files first; when any file conflicts nothing is written (`ok=False`)."""
        with self._lock:
            ps = self.get(patch_id)
            selected = self._select(ps, hunk_ids, files)
            by_file: dict[str, list[str]] = {}
            for hunk in selected:
                by_file.setdefault(hunk.file, []).append(hunk.hunk_id)
            outcomes: list[FileOutcome] = []
            writes: dict[str, str] = {}
            for file, ids in by_file.items():
                change = ps.changes[file]
                source = change.old_path or file
                current = self._read_disk(source)
                if current is None:
                    current = "" if change.kind == "add" else None
                if current is None:
                    gone = f"{source} no longer exists"
                    outcomes.append(FileOutcome(file=file, ok=False, kind=change.kind, hunk_ids=ids, conflict=gone))
                    continue
                merged = self._merge(ps, file, ids, current)
                outcomes.append(
                    FileOutcome(
                        file=file, ok=merged.ok, kind=change.kind, hunk_ids=ids,
                        conflict=merged.conflict, merged=merged.merged,
                    )
                )
                if merged.ok and merged.text is not None:
                    writes[file] = merged.text
            failed = [o for o in outcomes if not o.ok]
            if failed:
                for o in failed:
                    self.sink.emit(
                        "PatchConflict@v1",
                        {"patch_id": patch_id, "file": o.file, "reason": o.conflict or "", "hunk_ids": o.hunk_ids},
                    )
                return ApplyResult(
                    ok=False,
                    patch_id=patch_id,
                    files=outcomes,
                    message="nothing was applied:\n" + "\n".join(o.conflict or o.file for o in failed),
                )
            if not selected:
                return ApplyResult(ok=True, patch_id=patch_id, message="no pending hunks to apply")
            touched = sorted({p for f in writes for p in (f, ps.changes[f].old_path) if p})
            applied_ids = [h.hunk_id for h in selected]
            checkpoint_id = self.checkpoints.create(
                touched, label=f"before applying {patch_id}", meta={"patch_id": patch_id, "hunk_ids": applied_ids}
            )
            for hunk in ps.hunks:
                if hunk.hunk_id in applied_ids:
                    hunk.status = "accepted"
            for file, text in writes.items():
                self._write_file(ps, file, text)
            self.checkpoints.record_after(checkpoint_id, touched)
            self._save(ps)
        self.sink.emit(
            "PatchApplied@v1",
            {
                "patch_id": patch_id,
                "hunk_ids": applied_ids,
                "files": list(writes),
                "via": "disk",
                "checkpoint_id": checkpoint_id,
            },
        )
        return ApplyResult(
            ok=True,
            patch_id=patch_id,
            applied=applied_ids,
            files=outcomes,
            checkpoint_id=checkpoint_id,
            message=f"applied {len(applied_ids)} hunk(s) to {len(writes)} file(s)",
        )

    def _select(self, ps: PatchSet, hunk_ids: list[str] | None, files: list[str] | None) -> list[Hunk]:
        if hunk_ids:
            chosen = [ps.hunk(h) for h in hunk_ids]
            done = [h.hunk_id for h in chosen if h.status != "pending"]
            if done:
                raise PatchError(f"hunk(s) {done} of patch {ps.patch_id} are no longer pending")
        else:
            chosen = ps.pending_hunks()
        if files:
            wanted = {self.policy.normalize(f) for f in files}
            unknown = wanted - set(ps.files)
            if unknown:
                raise PatchError(f"patch {ps.patch_id} does not change {sorted(unknown)}; it changes {ps.files}")
            chosen = [h for h in chosen if h.file in wanted]
        return chosen

    def _write_file(self, ps: PatchSet, file: str, text: str) -> None:
        change = ps.changes[file]
        target = self.policy.resolve(file)
        all_done = all(h.status == "accepted" for h in ps.hunks_of(file))
        if change.kind == "delete" and all_done and not text:
            safe_files.unlink(self.root, file)
            remove_empty_parents(target, self.root)
            return
        # Opened without following links, from the workspace root down (policy.safe_files).
        safe_files.write_bytes(self.root, file, text.encode("utf-8", "surrogatepass"), mode_from=change.old_path)
        if change.kind == "rename" and change.old_path and change.old_path != file:
            source = self.policy.resolve(change.old_path)
            if source != target:
                safe_files.unlink(self.root, change.old_path)
                remove_empty_parents(source, self.root)

    def mark_applied(self, patch_id: str, hunk_ids: list[str], via: str = "workspace/applyEdit",
                     checkpoint_id: str | None = None) -> PatchSet:
        """Record hunks as accepted after someone else (the editor) applied them (`checkpoint_id`: the
        snapshot of the buffers it was applied to, when one was made for an undo). Only pending hunks
        move (`HunkSettled` otherwise, nothing recorded): another process may have settled them."""
        ps = self._transition(patch_id, hunk_ids, "accepted")[0]
        files = sorted({ps.hunk(h).file for h in hunk_ids})
        payload = {"patch_id": patch_id, "hunk_ids": list(hunk_ids), "files": files, "via": via}
        if checkpoint_id:
            payload["checkpoint_id"] = checkpoint_id
        self.sink.emit("PatchApplied@v1", payload)
        return ps

    def record_applied(self, patch_id: str, hunk_ids: list[str], **kwargs: Any) -> dict[str, str]:
        """`mark_applied` after an editor applied `hunk_ids`, leaving those another process (the CLI,
        another editor) settled since they were checked as that process left them. Returns those (hunk
        id -> its status), {} when all were recorded. Each `mark_applied` is a compare-and-set under
        the store's file lock, so two processes never both win."""
        settled: dict[str, str] = {}
        remaining = list(hunk_ids)
        while remaining:
            try:
                self.mark_applied(patch_id, remaining, **kwargs)
                break
            except HunkSettled as error:
                settled.update(error.statuses)
                remaining = [h for h in remaining if h not in error.statuses]
        return settled

    def reject(self, patch_id: str, hunk_ids: list[str] | None = None, reason: str = "") -> PatchSet:
        """Remember hunks (default: all pending, as they are when the lock is taken) as rejected.
        Only pending hunks move (`HunkSettled` otherwise, nothing recorded)."""
        ps, chosen = self._transition(patch_id, hunk_ids, "rejected")
        self.sink.emit("PatchRejected@v1", {"patch_id": patch_id, "hunk_ids": chosen, "reason": reason})
        return ps

    def _transition(self, patch_id: str, hunk_ids: list[str] | None, status: str) -> tuple[PatchSet, list[str]]:
        """Compare-and-set, across processes: under the store's file lock, read the patch as it is
        on disk now and move `hunk_ids` (None: every pending hunk) from pending to `status` — all
        of them, or none when any is no longer pending (the editor and the CLI each read, change
        and write the patch file; checking before taking the lock would let one undo the other)."""
        with self._lock:
            ps = self.get(patch_id)
            chosen = [h.hunk_id for h in ps.pending_hunks()] if hunk_ids is None else list(hunk_ids)
            settled = {hid: ps.hunk(hid).status for hid in chosen if ps.hunk(hid).status != "pending"}
            if settled:
                raise HunkSettled(patch_id, settled, status)
            for hid in chosen:
                ps.hunk(hid).status = status  # type: ignore[assignment]
            self._save(ps)
        return ps, chosen

    def undo(self) -> list[str]:
        """Undo the latest apply on disk (`undo_on_disk`); the files its record covers ([] when there is
        nothing to undo). Refused (`PatchError` naming the files, nothing changed) when edits made
        after the apply overlap what it would restore."""
        plan = self.undo_on_disk()
        return [] if plan is None else plan.restored

    def undo_on_disk(self, checkpoint_ids: list[str] | None = None) -> UndoPlan | None:
        """Undo `checkpoint_ids` (newest first; default the newest unrestored one, None when there is
        none) on the disk, with no editor: the same in-memory 3-way plan as in the editor
        (`plan_undo`) against the files now, so edits made after the applies stay, all or nothing.
        Their hunks become pending again and each is a `CheckpointRestored@v1` (`via` "disk")."""
        with self._lock:
            if checkpoint_ids is None:
                latest = self.checkpoints.latest_unrestored()
                if latest is None:
                    return None
                checkpoint_ids = [latest]
            try:
                plan = self.checkpoints.restore_on_disk(checkpoint_ids)
            except UndoRefused as exc:
                raise PatchError(str(exc), [str(exc)]) from exc
            self.finish_undo(plan, "disk")
        return plan

    def plan_undo(self, checkpoint_ids: list[str], read_now: Callable[[str], str | None]) -> UndoPlan:
        """`CheckpointStore.plan_undo` against the text the person sees (`read_now`): nothing changes
        yet. A restore that would lose edits raises `PatchError` naming the files."""
        try:
            return self.checkpoints.plan_undo(checkpoint_ids, read_now)
        except UndoRefused as exc:
            raise PatchError(str(exc), [str(exc)]) from exc

    def finish_undo(self, plan: UndoPlan, via: str) -> None:
        """Record an undo an adapter landed (`plan` from `plan_undo`): its checkpoints are restored,
        their hunks pending again, and each is a `CheckpointRestored@v1` saying what was undone."""
        with self._lock:
            self.checkpoints.mark_restored(plan.checkpoint_ids)
            for meta in plan.meta:
                patch_id = meta.get("patch_id")
                if patch_id and self._path(patch_id).is_file():
                    try:
                        ps = self.get(patch_id)
                    except NotOurPatch:  # replaced by a file we did not stage (logged): not reopened
                        continue
                    for hunk in ps.hunks:
                        if hunk.hunk_id in meta.get("hunk_ids", []):
                            hunk.status = "pending"
                    self._save(ps)
        for cid, meta, covers in zip(plan.checkpoint_ids, plan.meta, plan.covers):
            payload = {"checkpoint_id": cid, "files": covers, "via": via,
                       "merged": [f.path for f in plan.files if f.merged and f.path in covers], "kept": plan.kept}
            if meta.get("patch_id"):
                payload["patch_id"] = meta["patch_id"]  # routes the event to the session that applied it
            self.sink.emit("CheckpointRestored@v1", payload)

    def reapplied(self, checkpoint_ids: list[str]) -> None:
        """A rewind that took `checkpoint_ids` out was redone (agent/rewind.py): they count as applied
        again (a later rewind or undo takes them out), their hunks accepted again."""
        with self._lock:
            self.checkpoints.mark_restored(checkpoint_ids, restored=False)
            for manifest in self.checkpoints.list():
                meta = manifest.get("meta") or {}
                patch_id = meta.get("patch_id")
                if manifest["checkpoint_id"] not in checkpoint_ids or not patch_id or not self._path(patch_id).is_file():
                    continue
                try:
                    ps = self.get(patch_id)
                except NotOurPatch:
                    continue
                for hunk in ps.hunks:
                    if hunk.hunk_id in meta.get("hunk_ids", []):
                        hunk.status = "accepted"
                self._save(ps)

    # -- storage -----------------------------------------------------------

    def _path(self, patch_id: str) -> Path:
        if not patch_id or any(c in patch_id for c in "/\\.\0"):
            raise PatchError(f"invalid patch id {patch_id!r}")
        return self.dir / f"{patch_id}.json"

    def _save(self, ps: PatchSet) -> None:
        """Write the patch sealed (`seal.py`): only sealed patches are read back."""
        path = self._path(ps.patch_id)
        tmp = path.with_name(path.name + ".tmp")
        # Sealed with its workspace: a patch of ours copied into another workspace is not ours there.
        record = seal.sealed({**ps.model_dump(mode="json"), "workspace": seal.workspace_id(self.root)})
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    def _read_disk(self, rel: str) -> str | None:
        path = self.policy.resolve(rel)
        if not path.is_file():
            return None
        # Opened without following links and checked (policy.safe_files).
        text = safe_files.read_text(self.root, rel)
        check_not_secret(rel, text)
        return text


def _why_not_ours(text: str, name: str, workspace: str) -> str | None:
    try:
        record = json.loads(text)
    except ValueError:
        return "it is not JSON"
    return seal.why_not_ours(record, "patch_id", name, workspace)


_HUNK_SUMMARY = {"hunk_id", "file", "old_start", "old_lines", "new_start", "new_lines"}


def _problem_message(problems: list[str]) -> str:
    return "cannot stage the diff:\n" + "\n".join(f"  - {p}" for p in problems)


def _file_key(path: Path) -> tuple[int, int, int, int]:
    """What tells one version of a patch file from another (each save is a new inode)."""
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size
