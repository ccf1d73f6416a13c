"""Top-level definitions of a file: what the repo map shows the planner.

Python: `def`/`class`/`CONSTANT =` in column 0 are the top-level definitions
(chained `A = b = C = 1` gives `A` and `C`). One regex finds them at line starts;
a string or a comment cannot hold a line start, except a triple-quoted string,
so only those are located (`str.find` for the quotes; a line holding a `#` or a
quote before them is lexed to see whether they open a string) and a definition
inside one is dropped. It agrees with `ast` on all but one of the standard
library's 1,790 files (there, `A=1; B=2` on one line gives only `A`) at ~1/10 of
the cost, and it also reads files that do not parse (Python 2, a half-typed
buffer). For other languages line-anchored regexes find definitions that start
in column 0 (after an optional `export`/`pub`/visibility prefix), which is what
"top-level" means in every language we list. C and C++ get their own patterns
(functions have no keyword; typedef names come last).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Callable, NamedTuple

from deepseek_ls import multiscan

from . import native


class Symbol(NamedTuple):
    """A tuple, not a dataclass: a build makes one per definition of every file."""

    name: str
    kind: str  # function | class | const | struct | impl | interface | type | ...
    line: int  # 1-based

    def to_list(self) -> list[object]:
        return [self.name, self.kind, self.line]

    @classmethod
    def from_list(cls, item: list[object]) -> "Symbol":
        name, kind, line = item
        return cls(str(name), str(kind), int(line))  # type: ignore[arg-type]


# A definition at a line start (`match` there): `def`/`class`, or an assignment
# (`X = `, `X: T = `, `X: T`). Lines that can start one are found first with a cheaper
# regex (a letter or `_` after a newline): trying the alternatives at every newline
# cost twice as much.
_LINE_START = re.compile(r"\n[A-Za-z_]")
_PY_DEF = re.compile(
    r"(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)"
    r"|class[ \t]+([A-Za-z_]\w*)"
    r"|([A-Za-z_]\w*)[ \t]*(?::[^=\n]*(?:=(?!=)|$)|=(?!=))",
    re.MULTILINE,
)
_PY_KINDS = ("", "function", "class", "const")
_CHAINED = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)")
_CONST_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# What can hide triple quotes on their line: a comment or a one-line string; or a
# triple quote earlier on the line opens the string.
_TRIPLE_QUOTES = ('"""', "'''")
_LINE_TOKEN = re.compile(
    r"\"\"\"|'''"
    r'|"(?:[^"\\\n]++|\\.)*+"?'
    r"|'(?:[^'\\\n]++|\\.)*+'?"
    r"|\#[^\n]*+"
)


def _opening_quote(text: str, line_start: int, quotes: int) -> tuple[int, int]:
    """For triple quotes at `quotes` with a `#` or a quote before them on their line:
    (where the string they are part of opens, -1) when they open one, or (-1, where
    scanning resumes) when they sit inside a comment or a one-line string."""
    at = line_start
    while (token := _LINE_TOKEN.search(text, at)) is not None and token.start() <= quotes:
        if token.group() in _TRIPLE_QUOTES:
            return token.start(), -1  # an earlier (or these) triple quotes open a string
        if token.end() > quotes:
            return -1, token.end()  # inside a comment or a one-line string
        at = token.end()
    return quotes, -1


def _triple_strings(text: str, find: Callable[[str, int], int] | None = None) -> list[tuple[int, int]]:
    """(start, end) of each triple-quoted string, in order (an unterminated one runs to
    the end of the file). `str.find` for the quotes (a regex over the bodies cost twice
    as much); a closing quote escaped by an odd run of backslashes does not close.
    A build runs this on every Python file: the common case (only indentation before
    the opening quotes) takes no further look at the line. `find(quotes, at)`: where
    `text.find` would find them (`_found_in` answers from a scan's positions)."""
    spans: list[tuple[int, int]] = []
    find = find or text.find
    rfind = text.rfind
    pos, double, single = 0, find('"""', 0), find("'''", 0)
    while double >= 0 or single >= 0:
        quotes = single if double < 0 or 0 <= single < double else double
        line_start = rfind("\n", pos, quotes) + 1 or pos
        if line_start != quotes and not text[line_start:quotes].isspace():
            head = text[line_start:quotes]
            if "#" in head or '"' in head or "'" in head:
                quotes, resume = _opening_quote(text, line_start, quotes)
                if resume >= 0:  # inside a comment or a one-line string
                    pos = resume
                    if double != -1 and double < pos:
                        double = find('"""', pos)
                    if single != -1 and single < pos:
                        single = find("'''", pos)
                    continue
        mark, at = text[quotes : quotes + 3], quotes + 3
        while True:
            end = find(mark, at)
            if end < 0:
                end = len(text)
                break
            before = end - 1
            while text[before] == "\\":
                before -= 1
            if (end - 1 - before) % 2 == 0:
                end += 3
                break
            at = end + 1
        spans.append((quotes, end))
        pos = end
        if double != -1 and double < pos:
            double = find('"""', pos)
        if single != -1 and single < pos:
            single = find("'''", pos)
    return spans


# Where a Python definition or a triple-quoted string can start, in one Hyperscan
# pass (ASCII text only: its byte offsets are its character offsets). Without it:
# `_LINE_START` and `str.find`, two or three passes, the same results.
_LINE, _DOUBLE, _SINGLE = 0, 1, 2
_PY_SCAN = multiscan.Lazy(
    lambda: [(rb"\n[A-Za-z_]", _LINE, 0), (rb'"""', _DOUBLE, 0), (rb"'''", _SINGLE, 0)], what="Python definitions"
)


def _note(kind: int, _start: int, to: int, _flags: int, found: tuple[list[int], list[int], list[int]]) -> None:
    found[kind].append(to)


def _found_in(doubles: list[int], singles: list[int]) -> Callable[[str, int], int]:
    """`text.find` for triple quotes, answered from their (sorted) positions."""
    positions = {'"""': doubles, "'''": singles}

    def find(quotes: str, at: int) -> int:
        found = positions[quotes]
        index = bisect_left(found, at)
        return found[index] if index < len(found) else -1

    return find


def _candidates(text: str) -> tuple[list[int], Callable[[str, int], int] | None]:
    """Starts of the lines that begin with a letter or `_` (where a definition can
    start), and a finder for triple quotes (None: `text.find`)."""
    first = [0] if text[:1].isascii() and (text[:1].isalpha() or text[:1] == "_") else []
    scanner = _PY_SCAN.get() if text.isascii() else None
    if scanner is None:
        return first + [match.start() + 1 for match in _LINE_START.finditer(text)], None
    found: tuple[list[int], list[int], list[int]] = ([], [], [])
    scanner.scan(text.encode("ascii"), _note, found)
    lines, doubles, singles = found
    return first + [to - 1 for to in lines], _found_in([to - 3 for to in doubles], [to - 3 for to in singles])


# The native twin of `_python_reference` (`_native.c`), None where it was not built.
_NATIVE: Callable[[str, type], list[Symbol]] | None = native.module.python_symbols if native.module else None


def _python(text: str) -> list[Symbol]:
    if _NATIVE is not None:
        return _NATIVE(text, Symbol)
    return _python_reference(text)


def _python_reference(text: str) -> list[Symbol]:
    out: list[Symbol] = []
    spans: list[tuple[int, int]] | None = None
    inside = 0  # the first string that does not end before the current line
    line, pos = 1, 0  # line number of text[pos]
    starts, find = _candidates(text)
    match_at = _PY_DEF.match
    for start in starts:
        match = match_at(text, start)
        if match is None:
            continue
        if spans is None:
            spans = _triple_strings(text, find)
        newline = start - 1
        while inside < len(spans) and spans[inside][1] <= newline:
            inside += 1
        if inside < len(spans) and spans[inside][0] <= newline:
            continue  # inside a triple-quoted string
        line += text.count("\n", pos, start)
        pos = start
        group = match.lastindex
        if group != 3:
            out.append(Symbol(match.group(group), _PY_KINDS[group], line))  # type: ignore[index]
            continue
        # An assignment: its UPPER_CASE targets, `A = b = C = 1` included.
        names, end = [match.group(3)], match.end()
        while chained := _CHAINED.match(text, end):
            names.append(chained.group(1))
            end = chained.end()
        out.extend(Symbol(name, "const", line) for name in names if _CONST_NAME.fullmatch(name))
    return out


_PREFIX = r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|" \
    r"abstract|final|sealed|open|async|unsafe|extern|inline|local|declare|data|case)\s+)*"
_Patterns = list[tuple[str, re.Pattern[str]]]


def _compile(pairs: list[tuple[str, str]], prefix: str = "") -> _Patterns:
    return [(kind, re.compile(rf"^{prefix}{pattern}", re.MULTILINE)) for kind, pattern in pairs]


_CLASS = ("class", r"(?:class|module|object|trait|enum|union)\s+([A-Za-z_$][\w$]*)")
_STRUCT = ("struct", r"struct\s+([A-Za-z_]\w*)")
_PATTERNS = _compile(
    [
        ("function", r"(?:def|fn|func|function\*?|fun)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"),
        _CLASS,
        _STRUCT,
        ("impl", r"impl(?:\s*<[^>{]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_][\w:]*)"),
        ("interface", r"(?:interface|protocol)\s+([A-Za-z_$][\w$]*)"),
        ("type", r"(?:type|typealias)\s+([A-Za-z_$][\w$]*)"),
        ("const", r"(?:const|let|var|static|val)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)"),
    ],
    _PREFIX,
)
# C and C++ have no definition keyword: a column-0 line with a name before `(`
# that does not end the statement is a function definition (return type first,
# or the GNU style with the name alone in column 0).
_C_PATTERNS = _compile(
    [
        ("macro", r"#[ \t]*define[ \t]+([A-Za-z_]\w*)"),
        ("type", r"typedef\b[^;{]*?\b([A-Za-z_]\w*)[ \t]*(?:\[[^\]]*\])?[ \t]*;"),
        ("type", r"\}[ \t]*([A-Za-z_]\w*)[ \t]*;"),
        ("function", r"(?!(?:if|for|while|switch|return|else|do|typedef|struct|enum|union|class)\b)"
                     r"(?:[A-Za-z_][\w:<>,]*[ \t*&]+)*\**([A-Za-z_][\w:~]*)[ \t]*\([^;\n]*$"),
        ("class", r"(?:class|enum|union|namespace)\s+([A-Za-z_]\w*)"),
        _STRUCT,
    ]
)
_BY_LANGUAGE: dict[str, _Patterns] = {"c": _C_PATTERNS, "cpp": _C_PATTERNS}


def _regex(text: str, patterns: _Patterns) -> list[Symbol]:
    # Every match as (start, rank of its pattern); lines counted in one pass over the starts.
    matches = sorted(
        (match.start(), rank, kind, match.group(1))
        for rank, (kind, pattern) in enumerate(patterns)
        for match in pattern.finditer(text)
    )
    found: dict[int, tuple[int, Symbol]] = {}
    line, pos = 1, 0
    for start, rank, kind, name in matches:
        line += text.count("\n", pos, start)
        pos = start
        # One definition a line: the first pattern in the list wins.
        if line not in found or rank < found[line][0]:
            found[line] = (rank, Symbol(name, kind, line))
    return [found[line][1] for line in sorted(found)]


def extract_symbols(language: str, text: str) -> list[Symbol]:
    """Top-level definitions of `text`, in file order."""
    if language == "python":
        return _python(text)
    return _regex(text, _BY_LANGUAGE.get(language, _PATTERNS))
