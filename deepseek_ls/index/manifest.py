"""`manifest.json`: what the index describes, and how to tell if it still does.

The manifest binds the tantivy index to its inputs: the baseline commit (in
git), the sorted `(path, sha256)` list with its merkle root, the schema version
and a hash of the ignore rules. `identity()` is the part that two builds of the
same tree must agree on; `built_at` and `storage` (which tantivy generation
directory holds the index, its commit opstamp and the size and sha256 of each
live segment file, to detect truncation or tampering) vary between builds.
Writes are atomic (temp file + rename): a reader sees the old or the new
manifest, never half of one.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SkipReason = Literal["binary", "too_large", "unreadable", "secret"]


class SkippedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    reason: SkipReason
    sha256: str  # "" when unreadable
    detail: str = ""


class Storage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    generation: str
    opstamp: int
    num_docs: int
    files: dict[str, tuple[int, str]] = Field(default_factory=dict)  # name -> (size, sha256)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", ignored_types=(cached_property,))

    schema_version: int
    baseline_commit: str | None
    files: list[tuple[str, str]]  # (path, sha256), sorted by path
    merkle_root: str
    ignore_rules_hash: str
    skipped: list[SkippedFile] = Field(default_factory=list)
    built_at: str
    storage: Storage

    def identity(self) -> dict[str, Any]:
        """What must be equal for two builds of the same inputs."""
        return self.model_dump(mode="json", exclude={"built_at", "storage"})

    @cached_property
    def file_map(self) -> dict[str, str]:
        return dict(self.files)

    @cached_property
    def seen(self) -> dict[str, str]:
        """Every enumerated file (indexed or skipped) → its sha256."""
        return {**self.file_map, **{s.path: s.sha256 for s in self.skipped}}


class ManifestError(ValueError):
    """The manifest is missing fields, unreadable or not ours: the index is corrupt."""


@lru_cache(maxsize=1 << 18)
def _leaf(path: str, sha256: str) -> bytes:
    # Cached: an update changes a few leaves and recomputes the root on every save.
    return hashlib.sha256(f"{path}\0{sha256}".encode()).digest()


def merkle_root(files: list[tuple[str, str]]) -> str:
    """Root of a binary sha256 merkle tree over `(path, sha256)` leaves in path order."""
    level = [_leaf(p, h) for p, h in files]
    if not level:
        return hashlib.sha256(b"").hexdigest()
    while len(level) > 1:
        if len(level) % 2:
            level.append(level[-1])
        level = [hashlib.sha256(level[i] + level[i + 1]).digest() for i in range(0, len(level), 2)]
    return level[0].hex()


def load_manifest(path: Path) -> Manifest:
    try:
        raw = path.read_text(encoding="utf-8")
        return Manifest.model_validate_json(raw)
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, ValidationError, ValueError) as exc:
        raise ManifestError(f"{path}: {exc.__class__.__name__}: {str(exc).splitlines()[0]}") from exc


def write_text_atomic(path: Path, text: str) -> None:
    """Temp file + rename. No fsync on purpose: this is derived state, and a
    manifest lost in a crash makes the index read as corrupt, hence rebuilt."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_manifest(path: Path, manifest: Manifest) -> None:
    write_text_atomic(path, manifest.model_dump_json() + "\n")
