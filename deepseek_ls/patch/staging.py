"""Staging one file of a diff: read its base, locate its hunks, give them identities.

The base is what the model saw: the editor's buffer when the document is open,
else the file on disk. Each hunk is located (see `locate.py`), rebuilt on the
base's own lines and given a stable id; a file change without hunks (pure
rename, empty new file) gets one marker hunk so every change can be accepted or
rejected by hunk id.
"""

from __future__ import annotations

from pathlib import Path

from deepseek_ls.patch.hunks import apply_hunks, split_lines
from deepseek_ls.patch.locate import locate_hunk
from deepseek_ls.patch.model import (
    FileChange,
    Hunk,
    MissingPathError,
    PatchError,
    hunk_id_for,
    sha256_text,
)
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.patch.parse import ParsedFile
from deepseek_ls.policy.paths import PathPolicy


def locate_file_change(
    f: ParsedFile, *, policy: PathPolicy, overlay: DocumentOverlay, root: Path, taken: set[str]
) -> tuple[FileChange, list[Hunk]]:
    """One file of a diff as a `FileChange` and its located `Hunk`s, against the base the
    model saw (the open buffer, else disk). Raises `PatchError` listing every problem."""

    def exists(rel: str) -> bool:
        return overlay.get(rel) is not None or (root / rel).is_file()

    path = policy.normalize(f.path)
    old_path = policy.normalize(f.old_path) if f.old_path else None
    kind = f.kind
    if kind == "modify" and old_path is not None and not exists(old_path) and _creates(f):
        # "--- a/new.py" with only added lines: the model meant to create the file.
        kind, old_path = "add", None
    if kind in ("add", "rename"):
        _check_free(path, root)
    if kind == "add":
        if exists(path) and overlay.read_text(path, root=root):
            raise PatchError("the diff creates this file but it already exists; diff against its current content")
        base_text = ""
    else:
        assert old_path is not None
        if not exists(old_path):
            raise MissingPathError(old_path)
        if kind == "rename" and exists(path):
            raise PatchError(f"cannot rename {old_path} to {path}: the target already exists")
        try:
            base_text = overlay.read_text(old_path, root=root)
        except UnicodeDecodeError:
            raise PatchError("the file is not UTF-8 text; binary files cannot be patched") from None
    base = split_lines(base_text)
    hunks: list[Hunk] = []
    problems: list[str] = []
    floor = 0
    delta = 0  # lines the model's numbering is off by, carried to the next hunk
    line_delta = 0  # new-minus-old lines so far, for new_start
    failed: list[int] = []
    for index, ph in enumerate(f.hunks):
        claimed = ph.old_start - 1 if ph.old_lines else ph.old_start
        try:
            place = locate_hunk(base, ph, hint=max(claimed + delta, 0), floor=floor)
        except PatchError as exc:
            problems.append(f"hunk {index + 1} of {len(f.hunks)}: {exc}")
            failed.append(index)
            continue
        delta = place.start - claimed
        old_text, new_text = "".join(place.old_seq), "".join(place.new_seq)
        old_n, new_n = len(place.old_seq), len(place.new_seq)
        hid = hunk_id_for(path, old_text, new_text, taken)
        taken.add(hid)
        new_index = place.start + line_delta
        hunks.append(
            Hunk(
                hunk_id=hid,
                file=path,
                old_start=place.start + 1 if old_n else place.start,
                old_lines=old_n,
                new_start=new_index + 1 if new_n else new_index,
                new_lines=new_n,
                lines=[tag + text.rstrip("\r\n") for tag, text in ph.body],
                old_text=old_text,
                new_text=new_text,
                section=ph.section,
                located=place.located,
                offset=place.start - claimed if ph.numbered else 0,
                recounted=ph.recounted,
            )
        )
        line_delta += new_n - old_n
        floor = place.start + old_n
    if problems:
        raise PatchError("; ".join(problems), problems, failed_hunks=[(path, i) for i in failed])
    if not hunks:  # pure rename, empty new file, deletion of an empty file
        marker = f"{kind} {old_path or ''} -> {path}"
        hid = hunk_id_for(path, marker, "", taken)
        hunks.append(Hunk(hunk_id=hid, file=path, old_start=0, old_lines=0, new_start=0, new_lines=0, section=marker))
    if kind == "delete" and apply_hunks(base_text, hunks):
        raise PatchError("the diff deletes the file but its hunks do not remove all of its content")
    change = FileChange(
        path=path,
        old_path=old_path if kind != "add" else None,
        kind=kind,
        base_sha256=sha256_text(base_text) if kind != "add" else None,
        base_text=base_text,
        hunk_ids=[h.hunk_id for h in hunks],
    )
    return change, hunks


def _creates(f: ParsedFile) -> bool:
    """Every hunk only adds lines, from the top: the diff writes a new file."""
    return bool(f.hunks) and all(not h.old_seq for h in f.hunks) and f.hunks[0].old_start <= 1


def _check_free(path: str, root: Path) -> None:
    """A file can be created at `path`: no directory there, no file where a parent directory must be."""
    target = root / path
    if target.is_dir():
        raise PatchError(f"{path} is a directory; a file cannot be written there")
    for parent in Path(path).parents:
        if str(parent) != "." and (root / parent).exists() and not (root / parent).is_dir():
            raise PatchError(f"cannot create {path}: {parent} is a file, not a directory")
