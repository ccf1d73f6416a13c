"""Checkpoints: a copy of the files an apply is about to touch, for `undo`.

Each checkpoint is a directory `.deepseek/checkpoints/<id>/` with
`manifest.json` (files, whether each existed, the patch it preceded), the
original bytes under `files/` and, once the apply has written, the bytes it
wrote under `after/`. `restore_latest()` puts the newest unrestored checkpoint
back and marks it restored. It never loses what the person did after the apply:
a file that changed since is merged three-way (base: what the apply wrote;
ours: the file now; theirs: the file before the apply), and when that overlaps,
or the file was created or deleted by hand, nothing at all is restored and
`UndoRefused` names the files. Removing a file also removes the directories it
leaves empty (as `git apply` does). Only the newest `keep` checkpoints are kept.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from pathlib import Path

from filelock import FileLock

from deepseek_ls.patch.merge import merge_three_way


class CheckpointStore:
    def __init__(self, root: Path, state_dir: Path, *, keep: int = 50) -> None:
        self.root = Path(root).resolve()
        self.keep = keep
        self.dir = Path(state_dir) / "checkpoints"
        self._lock = FileLock(str(Path(state_dir) / "checkpoints.lock"))

    def create(self, files: list[str], *, label: str = "", meta: dict | None = None) -> str:
        """Snapshot `files` (workspace-relative); returns the checkpoint id."""
        # Names sort chronologically, so listing and pruning need not read manifests.
        now = time.time_ns()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000_000))
        checkpoint_id = f"{stamp}-{now % 1_000_000_000:09d}-{secrets.token_hex(2)}"
        target = self.dir / checkpoint_id
        (target / "files").mkdir(parents=True, exist_ok=True)
        entries = []
        for rel in files:
            src = self.root / rel
            existed = src.is_file()
            if existed:
                dest = target / "files" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
            entries.append({"path": rel, "existed": existed})
        manifest = {
            "checkpoint_id": checkpoint_id,
            "created": time.time(),
            "label": label,
            "files": entries,
            "restored": False,
            "meta": meta or {},
        }
        _write_json(target / "manifest.json", manifest)
        self._prune()
        return checkpoint_id

    def _prune(self) -> None:
        for name in self._names()[: -self.keep]:
            shutil.rmtree(self.dir / name, ignore_errors=True)

    def _names(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.name for p in self.dir.iterdir() if p.is_dir())

    def _manifest(self, name: str) -> dict | None:  # noqa: D401 - name is the checkpoint id
        try:
            return json.loads((self.dir / name / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def list(self) -> list[dict]:
        """Manifests, oldest first."""
        return [m for m in map(self._manifest, self._names()) if m is not None]

    def record_after(self, checkpoint_id: str, files: list[str]) -> None:
        """Snapshot `files` as the apply left them: undo compares against this to find later edits."""
        target = self.dir / checkpoint_id
        manifest = self._manifest(checkpoint_id)
        if manifest is None:
            return
        after = {}
        for rel in files:
            src = self.root / rel
            after[rel] = src.is_file()
            if after[rel]:
                dest = target / "after" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
        manifest["after"] = after
        _write_json(target / "manifest.json", manifest)

    def restore_latest(self) -> tuple[str, list[str], dict] | None:
        """Restore the newest unrestored checkpoint; None when there is nothing to undo.
        Raises `UndoRefused` (nothing restored) when a later edit cannot be kept."""
        with self._lock:
            manifest = next(
                (m for m in map(self._manifest, reversed(self._names())) if m is not None and not m.get("restored")),
                None,
            )
            if manifest is None:
                return None
            cid = manifest["checkpoint_id"]
            plan: list[tuple[str, bytes | None]] = []  # (path, bytes to write | None = remove)
            refused: list[str] = []
            for entry in manifest["files"]:
                rel = entry["path"]
                before = _read(self.dir / cid / "files" / rel) if entry["existed"] else None
                wrote = manifest.get("after", {}).get(rel)
                after = _read(self.dir / cid / "after" / rel) if wrote else None
                now = _read(self.root / rel)
                if wrote is None or now == after:  # untouched since the apply (or a checkpoint of an older version)
                    plan.append((rel, before))
                    continue
                if now is None or after is None or before is None:
                    state = "deleted" if now is None else "created again"
                    refused.append(f"{rel}: it was {state} after the apply")
                    continue
                try:
                    merged = merge_three_way(_text(after), _text(now), _text(before), label=rel)
                except UnicodeDecodeError:
                    refused.append(f"{rel}: it changed after the apply and is not UTF-8 text, so it cannot be merged")
                    continue
                if not merged.ok:
                    refused.append(merged.report.replace("the file changed since the patch was staged",
                                                         "edited after the apply"))
                    continue
                plan.append((rel, merged.text.encode("utf-8", "surrogatepass")))
            if refused:
                raise UndoRefused(
                    "undo refused, nothing was changed: edits made after the apply would be lost\n"
                    + "\n".join(f"  - {r}" for r in refused)
                    + "\nrevert those edits by hand, or keep the applied change",
                    [r.split(":", 1)[0] for r in refused],
                )
            restored: list[str] = []
            for rel, data in plan:
                dest = self.root / rel
                if data is not None:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    tmp = dest.with_name(f".{dest.name}.dsls-undo")
                    tmp.write_bytes(data)
                    source = self.dir / cid / "files" / rel
                    if source.is_file():
                        shutil.copymode(source, tmp)
                    os.replace(tmp, dest)
                elif dest.exists():
                    dest.unlink()
                    remove_empty_parents(dest, self.root)
                restored.append(rel)
            manifest["restored"] = True
            _write_json(self.dir / cid / "manifest.json", manifest)
            return cid, restored, manifest.get("meta", {})


class UndoRefused(Exception):
    """Undo would overwrite edits made after the apply; `files` names them."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


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


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
