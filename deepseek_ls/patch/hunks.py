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


def find_block(lines: list[str], old: list[str], expected: int) -> int | None:
    """Index where `old` occurs exactly in `lines`, the occurrence nearest `expected` first (the
    earlier one on a tie); None when it does not occur. The one hunk locator for buffers that moved
    since staging (the patch store, the editor's lenses and hover)."""
    n, m = len(lines), len(old)
    if m == 0:
        return min(max(expected, 0), n)
    first = old[0]
    limit = n - m
    for distance in range(0, max(expected, limit - expected) + 1):
        for i in (expected - distance, expected + distance) if distance else (expected,):
            if 0 <= i <= limit and lines[i] == first and lines[i : i + m] == old:
                return i
    return None


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
