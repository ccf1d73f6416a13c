"""Checkpoints: a copy of the files an apply is about to touch, for `undo`.

Each checkpoint is a directory `.deepseek/checkpoints/<id>/` with
`manifest.json` (files, whether each existed, the patch it preceded) and the
original bytes under `files/`. `restore_latest()` puts the newest unrestored
checkpoint back (recreating or deleting files as needed) and marks it restored.
Only the newest `keep` checkpoints are kept.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from pathlib import Path

from filelock import FileLock


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

    def _manifest(self, name: str) -> dict | None:
        try:
            return json.loads((self.dir / name / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None

    def list(self) -> list[dict]:
        """Manifests, oldest first."""
        return [m for m in map(self._manifest, self._names()) if m is not None]

    def restore_latest(self) -> tuple[str, list[str], dict] | None:
        """Restore the newest unrestored checkpoint; None when there is nothing to undo."""
        with self._lock:
            manifest = next(
                (m for m in map(self._manifest, reversed(self._names())) if m is not None and not m.get("restored")),
                None,
            )
            if manifest is None:
                return None
            cid = manifest["checkpoint_id"]
            restored: list[str] = []
            for entry in manifest["files"]:
                rel = entry["path"]
                dest = self.root / rel
                if entry["existed"]:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    tmp = dest.with_name(f".{dest.name}.dsls-undo")
                    shutil.copy2(self.dir / cid / "files" / rel, tmp)
                    os.replace(tmp, dest)
                elif dest.exists():
                    dest.unlink()
                restored.append(rel)
            manifest["restored"] = True
            _write_json(self.dir / cid / "manifest.json", manifest)
            return cid, restored, manifest.get("meta", {})


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
