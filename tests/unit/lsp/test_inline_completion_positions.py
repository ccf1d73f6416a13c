"""The cursor of an inline completion request as an offset (lsp/inline_completion._line_at): the
same line LSP numbers, found without splitting the whole buffer (its fast path for text without a
lone CR must agree with `positions.lsp_lines`)."""

import pytest

from deepseek_ls.lsp.inline_completion import _line_at
from deepseek_ls.lsp.positions import lsp_lines


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\nbc\n\nd", "x\r\ny\r\n", "x\ry\nz", "\n\n\n", "é\n🙂x\n"])
def test_the_line_and_its_offset_are_the_ones_lsp_numbers(text: str) -> None:
    lines = lsp_lines(text) or [""]
    for number in range(len(lines) + 2):
        index = min(number, len(lines) - 1)
        expected = (sum(len(item) for item in lines[:index]), lines[index])
        if text.endswith("\n") and number >= len(lines):
            expected = (len(text), "")  # the empty line after a final newline, where a cursor can be
        assert _line_at(text, number) == expected, (text, number)
