"""Minimal text edits between two versions of a document, in LSP positions.

Pure functions: `minimal_edits(old, new)` returns non-overlapping replacements
of whole line runs (the only lines that differ), expressed against `old` with
UTF-16 character offsets, as `workspace/applyEdit` wants them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from deepseek_ls.lsp.hunk_views import split_lines


@dataclass(frozen=True)
class LineEdit:
    start_line: int
    start_char: int
    end_line: int
    end_char: int
    new_text: str


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _position(lines: list[str], index: int) -> tuple[int, int]:
    """LSP position of the start of line `index` (= end of the text when past the end)."""
    if index < len(lines):
        return index, 0
    if lines and not lines[-1].endswith("\n"):
        last = lines[-1]
        return len(lines) - 1, utf16_len(last)
    return len(lines), 0


def minimal_edits(old: str, new: str) -> list[LineEdit]:
    """The line runs that differ between `old` and `new`, as edits against `old`."""
    if old == new:
        return []
    a, b = split_lines(old), split_lines(new)
    edits = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = _position(a, i1), _position(a, i2)
        edits.append(LineEdit(start[0], start[1], end[0], end[1], "".join(b[j1:j2])))
    return edits


def apply_edits(text: str, edits: list[LineEdit]) -> str:
    """Apply `edits` (against `text`) — the inverse check used by tests and the
    server's own verification of what it is about to send."""
    lines = split_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, char: int) -> int:
        if line >= len(lines):
            return len(text)
        # UTF-16 units -> code points within the line.
        units, idx, content = 0, 0, lines[line]
        while idx < len(content) and units < char:
            units += utf16_len(content[idx])
            idx += 1
        return offsets[line] + idx

    out, pos = [], 0
    for edit in sorted(edits, key=lambda e: (e.start_line, e.start_char)):
        start, end = offset(edit.start_line, edit.start_char), offset(edit.end_line, edit.end_char)
        out.append(text[pos:start])
        out.append(edit.new_text)
        pos = end
    out.append(text[pos:])
    return "".join(out)
