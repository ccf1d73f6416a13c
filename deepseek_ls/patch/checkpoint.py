"""Checkpoints: a copy of the files an apply is about to touch, for `undo`.

Each checkpoint is a directory `.deepseek/checkpoints/<id>/` with
`manifest.json` (files, whether each existed, the patch it preceded), the
original bytes under `files/` and, once the apply has written, the bytes it
wrote under `after/`. Without an editor (the CLI) `restore_on_disk(ids)` undoes checkpoints on the
disk and `restore_latest()` the newest unrestored one; both are `plan_undo` (below) against the
files as they are now, written only while each file still holds what the plan was computed from.
It never loses what the person did after the apply: a file that changed since is merged three-way
(base: what the apply wrote; ours: the file now; theirs: the file before the apply), and when that
overlaps, or the file was created or deleted by hand, nothing at all is restored and `UndoRefused`
names the files. Removing a file also removes the directories it leaves empty (as `git apply` does).

Retention: the newest `keep` (50) checkpoints are kept, the last apply among them; older ones are
removed, except everything from the oldest Hetun mission mark not yet undone onward (what that
mission's undo needs), as long as that makes at most `limit` (500) checkpoints in all; a mark
that would need more is removed with the applies that only it held.

An adapter with buffers (the language server) gives the texts itself: `create(texts=…)` snapshots
the buffer the person sees (unsaved edits included) instead of the disk, `record_after(texts=…)`
what the editor's buffer became. `plan_undo` computes the same restore in memory against the text
the person sees now (buffer, else disk), all or nothing, so the adapter can land it in the buffers
(`workspace/applyEdit`); `mark_restored` then records it. A checkpoint without a record of what was
written (a Hetun mission's mark, made before its first write) changes nothing in `plan_undo`: the
applies after it restore their own files, and a file that differs from the mark without one of them
holds the person's edits, so it is kept and named.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from deepseek_ls.patch.merge import merge_three_way
from deepseek_ls.store import seal


class CheckpointStore:
    def __init__(self, root: Path, state_dir: Path, *, keep: int = 50, limit: int = 500) -> None:
        self.root = Path(root).resolve()
        self.keep = keep  # the newest ones, always kept
        self.limit = limit  # at most this many while a mission not yet undone needs older ones
        self.dir = Path(state_dir) / "checkpoints"
        self._lock = FileLock(str(Path(state_dir) / "checkpoints.lock"))

    def create(self, files: list[str], *, label: str = "", meta: dict | None = None,
               texts: Mapping[str, str | None] | None = None) -> str:
        """Snapshot `files` (workspace-relative); returns the checkpoint id. `texts` gives the text of
        some of them as the person sees it (an open buffer, unsaved edits included; None: the file
        does not exist): that is snapshotted instead of the disk."""
        # Names sort chronologically, so listing and pruning need not read manifests.
        now = time.time_ns()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000_000))
        checkpoint_id = f"{stamp}-{now % 1_000_000_000:09d}-{secrets.token_hex(2)}"
        target = self.dir / checkpoint_id
        (target / "files").mkdir(parents=True, exist_ok=True)
        entries = []
        given = texts or {}
        for rel in files:
            src = self.root / rel
            dest = target / "files" / rel
            if rel in given:
                digest = _store(dest, given[rel])
                entry = {"path": rel, "existed": digest is not None, "source": "buffer"}
            else:
                digest = _store(dest, src)
                entry = {"path": rel, "existed": digest is not None}
            if digest is not None:
                entry["sha256"] = digest
            entries.append(entry)
        manifest = {
            "checkpoint_id": checkpoint_id,
            "created": time.time(),
            "label": label,
            "files": entries,
            "restored": False,
            "meta": meta or {},
            "workspace": seal.workspace_id(self.root),  # sealed with it: not ours in another workspace
        }
        _write_json(target / "manifest.json", manifest)
        self._prune()
        return checkpoint_id

    def _prune(self) -> None:
        """Keep the newest `keep` checkpoints (the last apply among them) and, beyond those, everything
        from the oldest mission mark not yet undone onward (what that mission's undo restores), when
        that makes at most `limit` checkpoints; a mark that would need more goes, and its hold with it."""
        names = self._names()
        if len(names) <= self.keep:
            return
        older = names[: -self.keep]
        drop = older  # no mission mark to hold them
        for i, name in enumerate(older):
            # The oldest live mark whose chain fits in `limit`; a mark past it goes, and with it its hold.
            if len(names) - i <= max(self.limit, self.keep) and _is_live_mark(self._manifest(name)):
                drop = older[:i]
                break
        for name in drop:
            shutil.rmtree(self.dir / name, ignore_errors=True)

    def _names(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.name for p in self.dir.iterdir() if p.is_dir())

    def _manifest(self, name: str) -> dict | None:  # noqa: D401 - name is the checkpoint id
        """The checkpoint's manifest; None when it is unreadable or not ours: without a seal made
        with this user's key (one a repository shipped in `.deepseek/`, from another machine, or
        altered), or sealed under another name (`seal.py`)."""
        path = self.dir / name / "manifest.json"
        try:
            raw = path.read_text(encoding="utf-8")
            manifest = json.loads(raw)
        except (OSError, json.JSONDecodeError):
            return None
        workspace = seal.workspace_id(self.root)
        if seal.why_not_ours(manifest, "checkpoint_id", name, workspace) is not None:
            return None
        if seal.is_legacy(manifest):  # ours, sealed before seals named the workspace: bind it here
            manifest["workspace"] = workspace
            try:
                # Under the lock and only if unchanged since read: another process may have marked
                # it restored meanwhile, and writing this copy back would let it be undone twice.
                with self._lock:
                    if path.read_text(encoding="utf-8") == raw:
                        _write_json(path, manifest)
            except OSError:
                pass  # read-only: checked the old way again next time
        return manifest

    def list(self) -> list[dict]:
        """Manifests, oldest first."""
        return [m for m in map(self._manifest, self._names()) if m is not None]

    def record_after(self, checkpoint_id: str, files: list[str],
                     texts: Mapping[str, str | None] | None = None) -> None:
        """Snapshot `files` as the apply left them: undo compares against this to find later edits.
        `texts`: what the apply left in the editor's buffers (None: the file is gone), not the disk."""
        target = self.dir / checkpoint_id
        manifest = self._manifest(checkpoint_id)
        if manifest is None:
            return
        after = {}
        hashes = {}
        given = texts or {}
        for rel in files:
            digest = _store(target / "after" / rel, given[rel] if rel in given else self.root / rel)
            after[rel] = digest is not None
            if digest is not None:
                hashes[rel] = digest
        manifest["after"] = after
        manifest["after_sha256"] = hashes
        _write_json(target / "manifest.json", manifest)

    def restore_latest(self) -> tuple[str, list[str], dict] | None:
        """Undo the newest unrestored checkpoint on disk (`restore_on_disk`); None when there is nothing
        to undo. Raises `UndoRefused` (nothing restored) when a later edit cannot be kept."""
        with self._lock:
            cid = self.latest_unrestored()
            if cid is None:
                return None
            plan = self.restore_on_disk([cid])
            return cid, plan.restored, plan.meta[0] if plan.meta else {}

    def latest_unrestored(self) -> str | None:
        """The newest checkpoint an `undo` takes out; a rewind's own (agent/rewind.py) is its redo's."""
        return next((m["checkpoint_id"] for m in map(self._manifest, reversed(self._names()))
                     if m is not None and not m.get("restored") and (m.get("meta") or {}).get("kind") != "rewind"),
                    None)

    def restore_on_disk(self, checkpoint_ids: list[str]) -> "UndoPlan":
        """Undo `checkpoint_ids` (newest first) on the disk, with no editor: `plan_undo` against the files
        as they are now, so edits made after the applies stay and a checkpoint without a record of what
        was written (a mission's mark) restores nothing over them. All or nothing: an overlap refuses
        before anything is written, and a file changed while the undo is written puts back what was
        written. Raises `UndoRefused` naming the files; on success the checkpoints are marked restored."""
        with self._lock:
            plan = self.plan_undo(checkpoint_ids, self._read_disk)
            written: list[FileUndo] = []
            try:
                for f in plan.files:
                    self._write_disk(f.path, f.now, f.target, checkpoint_ids)
                    written.append(f)
            except (OSError, UndoRefused) as exc:
                for f in reversed(written):
                    try:
                        self._write_disk(f.path, f.target, f.now, checkpoint_ids)
                    except (OSError, UndoRefused):  # changed again meanwhile: theirs, left alone
                        pass
                if isinstance(exc, UndoRefused):
                    raise
                raise UndoRefused(f"undo refused, nothing was changed: {exc}", [f.path for f in plan.files]) from exc
            self.mark_restored(checkpoint_ids)
            return plan

    def _read_disk(self, rel: str) -> str | None:
        from deepseek_ls.policy import safe_files
        from deepseek_ls.policy.errors import PolicyViolation

        if not os.path.lexists(self.root / rel):
            return None
        try:
            return safe_files.read_text(self.root, rel)
        except UnicodeDecodeError:
            raise UndoRefused(f"undo refused, nothing was changed: {rel} is not UTF-8 text now, so it cannot be "
                              "merged", [rel]) from None
        except (OSError, PolicyViolation) as exc:
            raise UndoRefused(f"undo refused, nothing was changed: cannot read {rel} ({exc})", [rel]) from None

    def _write_disk(self, rel: str, expected: str | None, text: str | None, checkpoint_ids: list[str]) -> None:
        """Put `text` (None: remove) in `rel`, only while the disk holds `expected` (what the undo was
        computed from): a file changed meanwhile is never overwritten."""
        from deepseek_ls.policy import safe_files

        if self._read_disk(rel) != expected:
            raise UndoRefused(f"undo refused, nothing was changed: {rel} changed on disk while the undo was "
                              "made; undo again", [rel])
        dest = self.root / rel
        if text is None:
            safe_files.unlink(self.root, rel)
            remove_empty_parents(dest, self.root)
            return
        safe_files.write_bytes(self.root, rel, text.encode("utf-8", "surrogatepass"))
        if expected is None:  # created again: with the permissions it had (oldest snapshot of it)
            for cid in reversed(checkpoint_ids):
                source = self.dir / cid / "files" / rel
                if source.is_file() and not dest.is_symlink():
                    os.chmod(dest, source.stat().st_mode & 0o7777)
                    break

    def plan_undo(self, checkpoint_ids: list[str], read_now: Callable[[str], str | None]) -> "UndoPlan":
        """What undoing `checkpoint_ids` (newest first, none restored yet) does to the text the person
        sees now (`read_now(path)`: the open buffer, else the disk; None: no such file), in memory and
        all or nothing: each apply is taken out three-way (base: what it wrote; ours: the text now;
        theirs: the text before it), so what was typed since stays. Raises `UndoRefused` naming the
        files when an edit overlaps what is to be restored, or a file was deleted or created again."""
        manifests = []
        for cid in checkpoint_ids:
            manifest = self._manifest(cid)
            if manifest is None or manifest.get("restored"):
                raise LookupError(f"checkpoint {cid} is already restored or gone")
            manifests.append(manifest)
        original: dict[str, str | None] = {}
        state: dict[str, str | None] = {}
        restored: list[str] = []  # files an apply's record covers, in order
        kept: list[str] = []
        refused: list[str] = []
        merged_files: set[str] = set()
        for manifest in manifests:
            cid = manifest["checkpoint_id"]
            for entry in manifest["files"]:
                rel = entry["path"]
                if rel not in state:
                    original[rel] = state[rel] = read_now(rel)
                now = state[rel]
                try:
                    wrote = manifest.get("after", {}).get(rel)
                    before = _stored(self.dir / cid / "files" / rel, entry.get("sha256")) if entry["existed"] else None
                    after = (_stored(self.dir / cid / "after" / rel, manifest.get("after_sha256", {}).get(rel))
                             if wrote else None)
                except (UnicodeDecodeError, AttributeError):
                    refused.append(f"{rel}: its checkpoint is not UTF-8 text, so it cannot be restored in the editor")
                    continue
                except _Altered:
                    refused.append(f"{rel}: its checkpoint was changed after it was taken (.deepseek/checkpoints/{cid})")
                    continue
                if wrote is None:  # a mark made before the writes: the applies after it restore their own
                    if rel not in restored and now != before and rel not in kept:
                        kept.append(rel)
                    continue
                if rel not in restored:
                    restored.append(rel)
                if now == after:
                    state[rel] = before
                    continue
                if now is None or after is None or before is None:
                    what = "deleted" if now is None else "created again"
                    refused.append(f"{rel}: it was {what} after the apply")
                    continue
                merged = merge_three_way(after, now, before, label=rel)
                if not merged.ok:
                    refused.append(merged.report.replace("the file changed since the patch was staged",
                                                         "edited after the apply"))
                    continue
                state[rel] = merged.text
                merged_files.add(rel)
        if refused:
            raise UndoRefused(
                "undo refused, nothing was changed: edits made after the apply overlap what it would restore\n"
                + "\n".join(f"  - {r}" for r in refused)
                + "\nrevert those edits by hand, or keep the applied change",
                list(dict.fromkeys(r.split(":", 1)[0] for r in refused)),
            )
        kept = [rel for rel in kept if rel not in restored]
        changes = [FileUndo(rel, original[rel], state[rel], merged=rel in merged_files)
                   for rel in restored if state[rel] != original[rel]]
        covers = [[e["path"] for e in m["files"] if m.get("after", {}).get(e["path"]) is not None] for m in manifests]
        return UndoPlan(checkpoint_ids=list(checkpoint_ids), files=changes, restored=restored, kept=kept,
                        meta=[m.get("meta", {}) for m in manifests], covers=covers)

    def mark_restored(self, checkpoint_ids: list[str], *, restored: bool = True) -> None:
        """Record `checkpoint_ids` as restored (after the adapter landed their `plan_undo`); `restored`
        False: as applied again (a redone rewind put their changes back)."""
        with self._lock:
            for cid in checkpoint_ids:
                manifest = self._manifest(cid)
                if manifest is not None:
                    manifest["restored"] = restored
                    _write_json(self.dir / cid / "manifest.json", manifest)


@dataclass
class FileUndo:
    """One file of an undo: the text it was computed from and the text to restore (None: remove)."""

    path: str
    now: str | None
    target: str | None
    merged: bool = False  # edits made after the apply were kept (3-way)


@dataclass
class UndoPlan:
    checkpoint_ids: list[str]  # newest first
    files: list[FileUndo]  # the files whose text changes
    restored: list[str]  # every file an apply's record covers
    kept: list[str] = field(default_factory=list)  # changed after a mark with no apply to undo: left as is
    meta: list[dict] = field(default_factory=list)  # each checkpoint's
    covers: list[list[str]] = field(default_factory=list)  # each checkpoint's files with a record of the apply


class UndoRefused(Exception):
    """Undo would overwrite edits made after the apply; `files` names them."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


def _is_live_mark(manifest: dict | None) -> bool:
    """A Hetun mission's mark (made before its first write) that was not undone yet."""
    return bool(manifest and not manifest.get("restored") and (manifest.get("meta") or {}).get("mission_id"))


def remove_empty_parents(path: Path, root: Path) -> None:
    """Remove the directories above `path` that are now empty, up to (not including) `root`."""
    parent = path.parent
    while parent != root and root in parent.parents:
        try:
            parent.rmdir()  # only succeeds when empty
        except OSError:
            return
        parent = parent.parent


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _store(dest: Path, source: str | Path | None) -> str | None:
    """Keep a file's content in a checkpoint: a buffer's text, or a workspace file (read once,
    its permissions kept for a re-creation); its sha256 for the sealed manifest, None when there
    is nothing (no buffer text, or no such file)."""
    if isinstance(source, Path):
        if not source.is_file():
            return None
        data = source.read_bytes()
    elif source is None:
        return None
    else:
        data = source.encode("utf-8", "surrogatepass")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    if isinstance(source, Path):
        shutil.copystat(source, dest)
    return seal.digest(data)


def _text(data: bytes) -> str:
    return data.decode("utf-8")


class _Altered(Exception):
    """A stored file no longer has the hash its sealed manifest recorded."""


def _stored(path: Path, sha256: object) -> str:
    """A file the checkpoint stored, as text, only if it still has its recorded hash."""
    data = _read(path)
    if data is None or not isinstance(sha256, str) or seal.digest(data) != sha256:
        raise _Altered(str(path))
    return _text(data)


def _write_json(path: Path, data: dict) -> None:
    """Write a manifest, sealed (`seal.py`): only sealed manifests are read back."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(seal.sealed(data), indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
