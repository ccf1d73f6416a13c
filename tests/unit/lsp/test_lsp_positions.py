"""Columns in utf-8 / utf-16 / utf-32 code units <-> Python code points, checked
against the bytes of each encoding (an independent count)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepseek_ls.lsp.positions import ENCODINGS, UTF8, UTF16, UTF32, from_units, lsp_lines, to_units, units

WIDTH = {UTF8: ("utf-8", 1), UTF16: ("utf-16-le", 2), UTF32: ("utf-32-le", 4)}
text = st.text(alphabet=st.sampled_from(list("aé中😀\t𝄞")), max_size=10)


def reference_units(s: str, encoding: str) -> int:
    codec, width = WIDTH[encoding]
    return len(s.encode(codec)) // width


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(line=text, data=st.data())
def test_to_units_then_from_units_is_the_identity(encoding: str, line: str, data: st.DataObject) -> None:
    column = data.draw(st.integers(0, len(line)))
    character = to_units(line, column, encoding)
    assert character == reference_units(line[:column], encoding)
    assert from_units(line, character, encoding) == column


@pytest.mark.parametrize(
    ("encoding", "character", "column"),
    [
        pytest.param(UTF8, 1, 1, id="utf-8 after x"),
        pytest.param(UTF8, 3, 1, id="utf-8 inside the emoji: its start"),
        pytest.param(UTF8, 5, 2, id="utf-8 after the emoji"),
        pytest.param(UTF8, 8, 3, id="utf-8 after CJK"),
        pytest.param(UTF16, 2, 1, id="utf-16 between surrogates: the emoji's start"),
        pytest.param(UTF16, 3, 2, id="utf-16 after the emoji"),
        pytest.param(UTF32, 2, 2, id="utf-32 after the emoji"),
        pytest.param(UTF16, 99, 4, id="past the end: the end of the line, not its newline"),
        pytest.param(UTF8, -1, 0, id="negative: the start"),
    ],
)
def test_from_units_reads_client_columns(encoding: str, character: int, column: int) -> None:
    assert from_units("x😀中y\n", character, encoding) == column


def test_units_counts_code_units() -> None:
    assert [units("😀中", e) for e in ENCODINGS] == [7, 3, 2]


def test_lsp_lines_break_only_at_lsp_line_endings() -> None:
    assert lsp_lines("a\r\nb\rc\x0cd\u2028e\nf") == ["a\r\n", "b\r", "c\x0cd\u2028e\n", "f"]
    assert lsp_lines("") == [] and lsp_lines("x\n") == ["x\n"]
