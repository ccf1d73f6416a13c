"""Top-level definitions of a file: what the repo map shows the planner.

Python files are read with `ast` (exact, and it sees through decorators and
strings); when a file does not parse (Python 2, a half-typed buffer), is very
large (`AST_MAX_CHARS`), or for other languages, line-anchored regexes find definitions that start in column 0
(after an optional `export`/`pub`/visibility prefix), which is what "top-level"
means in every language we list. C and C++ get their own patterns (functions
have no keyword; typedef names come last).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: str  # function | class | const | struct | impl | interface | type | ...
    line: int  # 1-based

    def to_list(self) -> list[object]:
        return [self.name, self.kind, self.line]

    @classmethod
    def from_list(cls, item: list[object]) -> "Symbol":
        name, kind, line = item
        return cls(str(name), str(kind), int(line))  # type: ignore[arg-type]


_CONST_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _python_ast(text: str) -> list[Symbol] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: list[Symbol] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(Symbol(node.name, "function", node.lineno))
        elif isinstance(node, ast.ClassDef):
            out.append(Symbol(node.name, "class", node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and _CONST_NAME.match(target.id):
                    out.append(Symbol(target.id, "const", node.lineno))
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
# Python without `ast` (a file that does not parse, or a very large one).
_PY_PATTERNS = _compile(
    [
        ("function", r"(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)"),
        ("class", r"class[ \t]+([A-Za-z_]\w*)"),
        ("const", r"([A-Z][A-Z0-9_]*)[ \t]*(?::[^=\n]*)?=(?!=)"),
    ]
)
_BY_LANGUAGE: dict[str, _Patterns] = {"c": _C_PATTERNS, "cpp": _C_PATTERNS, "python": _PY_PATTERNS}
# `ast` costs ~8x the regexes (and ~0.5 ms/KB); beyond this size the column-0
# regexes (which agree with `ast` on 97% of the stdlib's files) keep an on-save
# update of a huge file fast.
AST_MAX_CHARS = 100_000


def _regex(text: str, patterns: _Patterns) -> list[Symbol]:
    found: dict[int, Symbol] = {}
    for kind, pattern in patterns:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            # One definition a line: the first pattern in the list wins.
            found.setdefault(line, Symbol(match.group(1), kind, line))
    return sorted(found.values(), key=lambda s: s.line)


def extract_symbols(language: str, text: str) -> list[Symbol]:
    """Top-level definitions of `text`, in file order."""
    if language == "python" and len(text) <= AST_MAX_CHARS:
        parsed = _python_ast(text)
        if parsed is not None:
            return parsed
    return _regex(text, _BY_LANGUAGE.get(language, _PATTERNS))
