"""Applying located hunks to text: pure functions, no I/O."""

from __future__ import annotations

from deepseek_ls.patch.model import Hunk, PatchError


def split_lines(text: str) -> list[str]:
    """Lines with their endings; only "\\n" ends a line (a lone "\\r" or "\\x0c" does not)."""
    pieces = text.split("\n")
    lines = [p + "\n" for p in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def apply_hunks(base_text: str, hunks: list[Hunk]) -> str:
    """`base_text` with `hunks` (located against it) applied; raises `PatchError` if one does not fit."""
    base = split_lines(base_text)
    out: list[str] = []
    pos = 0
    for hunk in sorted(hunks, key=lambda h: (h.start_index, h.old_lines)):
        start, end = hunk.start_index, hunk.end_index
        if start < pos:
            raise PatchError(f"hunk {hunk.hunk_id} overlaps the previous hunk in {hunk.file}")
        if "".join(base[start:end]) != hunk.old_text:
            raise PatchError(
                f"hunk {hunk.hunk_id} does not match {hunk.file} at line {start + 1}: the base text differs"
            )
        out.extend(base[pos:start])
        out.append(hunk.new_text)
        pos = end
    out.extend(base[pos:])
    return "".join(out)
