"""Minimal edits: applying them to the old text gives the new text, only
differing lines are touched, and columns are in the negotiated encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepseek_ls.lsp.positions import ENCODINGS, UTF8, UTF16, UTF32
from deepseek_ls.lsp.textedits import apply_edits, minimal_edits

line = st.text(alphabet=st.sampled_from(list("ab é中😀\t\x0c")), max_size=6)
ending = st.sampled_from(["\n", "\r\n"])
document = st.lists(st.tuples(line, ending), max_size=12).map(lambda ls: "".join(a + b for a, b in ls)) | st.lists(
    line, max_size=12
).map(lambda lines: "\n".join(lines))


@pytest.mark.parametrize("encoding", ENCODINGS)
@given(old=document, new=document)
def test_applying_the_edits_gives_the_new_text(encoding: str, old: str, new: str) -> None:
    assert apply_edits(old, minimal_edits(old, new, encoding), encoding) == new


def test_one_changed_line_is_one_edit_of_that_line() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 42\n", "line forty-two\n")
    (edit,) = minimal_edits(old, new)
    assert (edit.start_line, edit.start_char, edit.end_line, edit.end_char) == (42, 0, 43, 0)
    assert edit.new_text == "line forty-two\n"


@pytest.mark.parametrize(
    ("encoding", "end_char"),
    [
        pytest.param(UTF8, 4 + 3 + 1, id="utf-8: 4 bytes + 3 bytes + 1"),
        pytest.param(UTF16, 2 + 1 + 1, id="utf-16: surrogate pair + 1 + 1"),
        pytest.param(UTF32, 3, id="utf-32: code points"),
    ],
)
def test_last_line_without_newline_ends_at_its_length_in_the_encoding(encoding: str, end_char: int) -> None:
    (edit,) = minimal_edits("a\n😀中x", "a\n😀中y", encoding)
    assert (edit.start_line, edit.start_char, edit.end_line, edit.end_char) == (1, 0, 1, end_char)


def test_form_feed_and_line_separator_do_not_end_a_line() -> None:
    # str.splitlines would split these; an editor does not.
    old = "a\x0cb\nc\u2028d\nlast\n"
    (edit,) = minimal_edits(old, old.replace("last", "LAST"))
    assert (edit.start_line, edit.end_line) == (2, 3)


def test_identical_texts_need_no_edit() -> None:
    assert minimal_edits("same\n", "same\n") == []
