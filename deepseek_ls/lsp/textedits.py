"""Minimal text edits between two versions of a document, in LSP positions.

Pure functions: `minimal_edits(old, new, encoding)` returns non-overlapping
replacements of whole line runs (the only lines that differ), expressed
against `old` in the negotiated position encoding (`positions.py`), as
`workspace/applyEdit` wants them. Lines are the client's lines (`lsp_lines`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from deepseek_ls.lsp.positions import UTF16, from_units, lsp_lines, units


@dataclass(frozen=True)
class LineEdit:
    start_line: int
    start_char: int
    end_line: int
    end_char: int
    new_text: str


def _position(lines: list[str], index: int, encoding: str) -> tuple[int, int]:
    """LSP position of the start of line `index` (= end of the text when past the end)."""
    if index < len(lines):
        return index, 0
    if lines and not lines[-1].endswith(("\n", "\r")):
        # The last line has no line break: the end of the text is on it.
        return len(lines) - 1, units(lines[-1], encoding)
    return len(lines), 0


def minimal_edits(old: str, new: str, encoding: str = UTF16) -> list[LineEdit]:
    """The line runs that differ between `old` and `new`, as edits against `old`."""
    if old == new:
        return []
    a, b = lsp_lines(old), lsp_lines(new)
    edits = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = _position(a, i1, encoding), _position(a, i2, encoding)
        edits.append(LineEdit(start[0], start[1], end[0], end[1], "".join(b[j1:j2])))
    return edits


def apply_edits(text: str, edits: list[LineEdit], encoding: str = UTF16) -> str:
    """Apply `edits` (against `text`, positions in `encoding`) — the inverse check
    used by tests and the server's own verification of what it is about to send."""
    lines = lsp_lines(text)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, char: int) -> int:
        if line >= len(lines):
            return len(text)
        return offsets[line] + from_units(lines[line], char, encoding)

    out, pos = [], 0
    for edit in sorted(edits, key=lambda e: (e.start_line, e.start_char)):
        start, end = offset(edit.start_line, edit.start_char), offset(edit.end_line, edit.end_char)
        out.append(text[pos:start])
        out.append(edit.new_text)
        pos = end
    out.append(text[pos:])
    return "".join(out)
