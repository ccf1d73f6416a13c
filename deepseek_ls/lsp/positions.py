"""LSP positions in the negotiated position encoding — the one place columns are converted.

LSP 3.17 lets the client offer `general.positionEncodings` (utf-8, utf-16,
utf-32); pygls picks the client's first supported choice (utf-16 when the
client offers none) at `initialize` and keeps it on the workspace. A
`Position.character` counts code units of that encoding: "x😀y" is 6 bytes
before "y" in utf-8, 3 units in utf-16 and 2 code points in utf-32. Python
strings index code points, so every column we send or receive goes through
`to_units` / `from_units` here; incremental `didChange` does too
(`text_sync.py` puts them under pygls's document sync).

Pure functions (plus `negotiated(ls)`); `textedits.py` and the tests use them
without a server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import re

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
ENCODINGS = (UTF8, UTF16, UTF32)

# Python codec and bytes per code unit of each LSP encoding.
_CODECS = {UTF8: ("utf-8", 1), UTF16: ("utf-16-le", 2), UTF32: ("utf-32-le", 4)}


def _codec(encoding: str) -> tuple[str, int]:
    try:
        return _CODECS[encoding]
    except KeyError:
        raise ValueError(f"unknown position encoding {encoding!r}; use one of {', '.join(ENCODINGS)}") from None


# A line and its terminator as LSP counts lines: "\n", "\r\n" or "\r" end one (not
# "\x0c", "\x1c" or U+2028, which `str.splitlines` also splits on).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def lsp_lines(text: str) -> list[str]:
    """`text` split into lines with their terminators, as the client numbers them."""
    return _LINE.findall(text)


def line_content(line: str) -> str:
    """`line` without its terminator: positions past it are clamped to its end."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def units(text: str, encoding: str) -> int:
    """Length of `text` in code units of `encoding`."""
    if encoding == UTF32:
        return len(text)
    codec, width = _codec(encoding)
    return len(text.encode(codec, "surrogatepass")) // width


def to_units(line: str, column: int, encoding: str) -> int:
    """The `Position.character` of code point `column` in `line`."""
    return units(line[: max(column, 0)], encoding)


def from_units(line: str, character: int, encoding: str) -> int:
    """The code point index in `line` of `Position.character` = `character`.

    A position past the end of the line's content means its end (as the spec
    says); one inside a character (half a surrogate pair, part of a UTF-8
    sequence) means the start of that character.
    """
    content = line_content(line)
    if character <= 0:
        return 0
    if encoding == UTF32:
        return min(character, len(content))
    codec, width = _codec(encoding)
    data = content.encode(codec, "surrogatepass")
    if character * width >= len(data):
        return len(content)
    return len(data[: character * width].decode(codec, "ignore"))


def negotiated(ls: LanguageServer) -> str:
    """The encoding agreed with the client at `initialize` (utf-16 before that)."""
    try:
        encoding: Any = ls.workspace.position_encoding
    except RuntimeError:  # no workspace yet: not initialized
        return UTF16
    value = getattr(encoding, "value", encoding)
    return value if value in ENCODINGS else UTF16
