"""Minimal edits: applying them to the old text gives the new text, and only
differing lines are touched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deepseek_ls.lsp.textedits import apply_edits, minimal_edits, utf16_len

line = st.text(alphabet=st.sampled_from(list("ab é😀\t")), max_size=6)
document = st.lists(line, max_size=12).map(lambda lines: "\n".join(lines)) | st.lists(line, max_size=12).map(
    lambda lines: "".join(f"{x}\n" for x in lines)
)


@given(document, document)
def test_applying_the_edits_gives_the_new_text(old: str, new: str) -> None:
    assert apply_edits(old, minimal_edits(old, new)) == new


def test_one_changed_line_is_one_edit_of_that_line() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 42\n", "line forty-two\n")
    (edit,) = minimal_edits(old, new)
    assert (edit.start_line, edit.start_char, edit.end_line, edit.end_char) == (42, 0, 43, 0)
    assert edit.new_text == "line forty-two\n"


def test_last_line_without_newline_ends_at_its_utf16_length() -> None:
    (edit,) = minimal_edits("a\n😀x", "a\n😀y")
    assert (edit.start_line, edit.end_line, edit.end_char) == (1, 1, utf16_len("😀x"))
    assert utf16_len("😀x") == 3


def test_identical_texts_need_no_edit() -> None:
    assert minimal_edits("same\n", "same\n") == []
