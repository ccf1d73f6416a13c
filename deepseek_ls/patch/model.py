"""The staged-change vocabulary: `PatchSet`, `FileChange`, `Hunk`.

A PatchSet is what one unified diff becomes once it is validated and located
against the exact base text the model saw. Every hunk has a stable id (a short
hash of its file and content), knows its position in the base, and carries its
old and new text so a client can render it without re-parsing the diff.
Persisted as JSON under `.deepseek/patches/<patch_id>.json`.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, Field

HunkStatus = Literal["pending", "accepted", "rejected"]
ChangeKind = Literal["modify", "add", "delete", "rename"]
Located = Literal["exact", "offset", "eol", "trailing_ws", "whitespace", "unicode", "redacted"]

# How each `Hunk.located` reads for a person (lens titles, hover, CLI).
LOCATED_LABELS: dict[str, str] = {
    "exact": "",
    "offset": "at other line numbers than the diff said",
    "eol": "ignoring line endings",
    "trailing_ws": "ignoring trailing whitespace",
    "whitespace": "ignoring whitespace",
    "unicode": "ignoring whitespace and typographic punctuation",
    "redacted": "reading redaction placeholders as the secrets they hid",
}


class PatchError(ValueError):
    """A diff that cannot be staged or applied; `problems` lists each reason."""

    def __init__(self, message: str, problems: list[str] | None = None, missing_paths: list[str] | None = None,
                 failed_hunks: list[tuple[str, int]] | None = None) -> None:
        self.problems = problems or [message]
        self.missing_paths = missing_paths or []  # files the diff edits that do not exist
        self.failed_hunks = failed_hunks or []  # (file, index of the hunk in that file) that could not be placed
        super().__init__(message)


class MissingPathError(PatchError):
    """The diff edits a file that does not exist (a wrong path in the plan or the diff)."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} does not exist in the workspace", missing_paths=[path])
        self.path = path


class Hunk(BaseModel):
    hunk_id: str
    file: str
    old_start: int = Field(description="1-based line in the base (diff convention: for an insertion, the line after which)")
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str] = Field(default_factory=list, description="the hunk body for display: prefix + text, no line ending")
    old_text: str = ""
    new_text: str = ""
    status: HunkStatus = "pending"
    section: str = ""
    located: Located = "exact"
    offset: int = 0
    recounted: bool = False  # the diff's @@ counts were wrong and were recounted from its body

    @property
    def start_index(self) -> int:
        """0-based index of the first base line this hunk replaces."""
        return self.old_start - 1 if self.old_lines else self.old_start

    @property
    def end_index(self) -> int:
        return self.start_index + self.old_lines

    @property
    def loc(self) -> int:
        return sum(1 for line in self.lines if line[:1] in "+-")


class FileChange(BaseModel):
    path: str
    old_path: str | None = None
    kind: ChangeKind = "modify"
    base_sha256: str | None = None
    base_text: str | None = None
    hunk_ids: list[str] = Field(default_factory=list)


class PatchSet(BaseModel):
    patch_id: str
    created_at: str
    session_id: str | None = None
    diff: str = ""
    files: list[str] = Field(default_factory=list)
    base_sha256: dict[str, str | None] = Field(default_factory=dict)
    changes: dict[str, FileChange] = Field(default_factory=dict)
    hunks: list[Hunk] = Field(default_factory=list)
    approval_required: bool = False
    approval_reasons: list[str] = Field(default_factory=list)
    # Files that execute or configure execution (patch/gate.py): always an explicit approval.
    exec_config_files: list[str] = Field(default_factory=list)

    def hunk(self, hunk_id: str) -> Hunk:
        for hunk in self.hunks:
            if hunk.hunk_id == hunk_id:
                return hunk
        raise PatchError(f"patch {self.patch_id} has no hunk {hunk_id!r}; hunks: {[h.hunk_id for h in self.hunks]}")

    def hunks_of(self, file: str) -> list[Hunk]:
        return [h for h in self.hunks if h.file == file]

    def pending_hunks(self) -> list[Hunk]:
        return [h for h in self.hunks if h.status == "pending"]

    def chosen_by_file(self, hunk_ids: list[str] | None) -> tuple[dict[str, list[str]], list[str]]:
        """An apply's hunks (`hunk_ids`, else the pending ones) as their ids per file, in order, and
        why those no longer pending cannot be applied ("hunk H is already rejected")."""
        chosen = [self.hunk(h) for h in hunk_ids] if hunk_ids else self.pending_hunks()
        groups: dict[str, list[str]] = {}
        for hunk in chosen:
            groups.setdefault(hunk.file, []).append(hunk.hunk_id)
        return groups, [f"hunk {h.hunk_id} is already {h.status}" for h in chosen if h.status != "pending"]

    @property
    def loc(self) -> int:
        return sum(h.loc for h in self.hunks)


class MergeResult(BaseModel):
    ok: bool
    text: str | None = None
    conflict: str | None = None
    merged: bool = False  # True when a 3-way merge was needed


class FileOutcome(BaseModel):
    file: str
    ok: bool
    kind: ChangeKind = "modify"
    hunk_ids: list[str] = Field(default_factory=list)
    conflict: str | None = None
    merged: bool = False


class ApplyResult(BaseModel):
    ok: bool
    patch_id: str
    applied: list[str] = Field(default_factory=list)
    files: list[FileOutcome] = Field(default_factory=list)
    checkpoint_id: str | None = None
    message: str = ""
    # The editor refused the change (the person said no to its write): nothing was written. A refused
    # change, not a mismatch to stage again.
    refused: bool = False


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def hunk_id_for(file: str, old_text: str, new_text: str, taken: set[str]) -> str:
    """Stable, short: the same change to the same file gets the same id."""
    digest = hashlib.sha256(f"{file}\0{old_text}\0{new_text}".encode("utf-8", "surrogatepass")).hexdigest()
    candidate = digest[:12]
    n = 1
    while candidate in taken:  # identical hunks twice in one file
        n += 1
        candidate = f"{digest[:12]}-{n}"
    return candidate
