"""Incremental didChange as pygls applies it, with our codec and line splitting:
the buffer the server holds is the buffer the editor has, in every encoding."""

from __future__ import annotations

import pytest
from lsprotocol import types

from deepseek_ls.lsp.positions import ENCODINGS
from deepseek_ls.lsp.text_sync import EncodingCodec, LspTextDocument

CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def editor_apply(text: str, start: tuple[int, int], end: tuple[int, int], new: str, encoding: str) -> str:
    """What an editor does: lines split at \\n only here (the corpus has no \\r),
    columns counted by encoding the line (independent of the code under test)."""
    lines = text.split("\n")
    codec, width = CODEC[encoding]

    def offset(line: int, character: int) -> int:
        if line >= len(lines):
            return len(text)
        prefix = lines[line].encode(codec)[: character * width].decode(codec)
        return sum(len(x) + 1 for x in lines[:line]) + len(prefix)

    return text[: offset(*start)] + new + text[offset(*end) :]


def units(s: str, encoding: str) -> int:
    codec, width = CODEC[encoding]
    return len(s.encode(codec)) // width


BASE = "a😀b中c\nform\x0cfeed and\u2028separator\nlast 🎉 line"

CASES = [
    pytest.param(lambda e: ((0, units("a😀", e)), (0, units("a😀b", e)), "B"), id="after an emoji"),
    pytest.param(lambda e: ((0, units("a😀b中c", e)), (1, 0), "|"), id="join at end of line with CJK"),
    pytest.param(lambda e: ((2, 0), (2, 0), "x"), id="line after form feed and U+2028"),
    pytest.param(lambda e: ((2, units("last 🎉 line", e)), (2, units("last 🎉 line", e)), "!"), id="end of file"),
    pytest.param(lambda e: ((2, units("last 🎉", e)), (2, units("last 🎉 line", e)), ""), id="delete to end of file"),
    pytest.param(lambda e: ((0, 0), (3, 0), "all"), id="replace everything (end past the last line)"),
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("change", CASES)
def test_never_clobber_incremental_change_in_every_encoding(encoding: str, change) -> None:
    start, end, new = change(encoding)
    doc = LspTextDocument("file:///w/x.py", BASE, version=1, position_codec=EncodingCodec(encoding))
    doc.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=new
        )
    )
    assert doc.source == editor_apply(BASE, start, end, new, encoding)


def test_never_clobber_a_column_past_the_end_of_the_last_line() -> None:
    # A client asking for "line length + 1" means the end of the line (spec); pygls
    # alone drops the last character.
    doc = LspTextDocument("file:///w/x.py", "ab", version=1, position_codec=EncodingCodec("utf-16"))
    doc.apply_change(
        types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(0, 5), end=types.Position(0, 5)), text="!"
        )
    )
    assert doc.source == "ab!"
