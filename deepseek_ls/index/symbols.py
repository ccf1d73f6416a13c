"""Top-level definitions of a file: what the repo map shows the planner.

Python files are read with `ast` (exact, and it sees through decorators and
strings); when a file does not parse (Python 2, a half-typed buffer) or for
other languages, line-anchored regexes find definitions that start in column 0
(after an optional `export`/`pub`/visibility prefix), which is what "top-level"
means in every language we list.
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
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(rf"^{_PREFIX}{pattern}", re.MULTILINE))
    for kind, pattern in [
        ("function", r"(?:def|fn|func|function\*?|fun)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"),
        ("class", r"(?:class|module|object|trait|enum|union)\s+([A-Za-z_$][\w$]*)"),
        ("struct", r"struct\s+([A-Za-z_]\w*)"),
        ("impl", r"impl(?:\s*<[^>{]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_][\w:]*)"),
        ("interface", r"(?:interface|protocol)\s+([A-Za-z_$][\w$]*)"),
        ("type", r"(?:type|typedef|typealias)\s+([A-Za-z_$][\w$]*)"),
        ("const", r"(?:const|let|var|static|val)\s+(?:mut\s+)?([A-Za-z_$][\w$]*)"),
    ]
]


def _regex(text: str) -> list[Symbol]:
    found: dict[int, Symbol] = {}
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            # One definition a line: the first pattern in the list wins.
            found.setdefault(line, Symbol(match.group(1), kind, line))
    return sorted(found.values(), key=lambda s: s.line)


def extract_symbols(language: str, text: str) -> list[Symbol]:
    """Top-level definitions of `text`, in file order."""
    if language == "python":
        parsed = _python_ast(text)
        if parsed is not None:
            return parsed
    return _regex(text)
