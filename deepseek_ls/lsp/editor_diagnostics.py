"""The editor's diagnostics as the model reads them: one line each, bounded.

Used by the Ask / Plan context (the clients send the current file's diagnostics, `AskArgs.diagnostics`)
and by the "DeepSeek: Fix …" / "Explain …" code actions (`lsp/diagnostic_actions.py`). What is said
here reaches the model only through the LLM client, which redacts every request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MAX_IN_PROMPT = 20  # a file with hundreds of warnings: the first ones say enough
MESSAGE_CHARS = 500
TITLE_CHARS = 60

_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters (with "…")."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def title(diagnostic: Any) -> str:
    """The diagnostic's message for a code action title: its first line, shortened."""
    first = next((line for line in str(diagnostic.message).splitlines() if line.strip()), "")
    return one_line(first, TITLE_CHARS) or "this diagnostic"


def origin(diagnostic: Any) -> str:
    """"error from pyright [reportMissingImports]": what it is and who said it."""
    out = _SEVERITY.get(diagnostic.severity or 0, "diagnostic")
    if diagnostic.source:
        out += f" from {one_line(diagnostic.source, 80)}"
    if diagnostic.code not in (None, ""):
        out += f" [{one_line(str(diagnostic.code), 80)}]"
    return out


def describe(diagnostic: Any) -> str:
    """One line: where (1-based line), what kind, who said it, and the message."""
    start = diagnostic.range.start
    return f"line {start.line + 1}:{start.character + 1}: {origin(diagnostic)}: {one_line(diagnostic.message, MESSAGE_CHARS)}"


def section(diagnostics: Iterable[Any]) -> str | None:
    """The diagnostics as a context section (None when there are none)."""
    items = list(diagnostics)
    if not items:
        return None
    shown = sorted(items, key=lambda d: (d.severity or 5, d.range.start.line))[:MAX_IN_PROMPT]
    lines = ["Diagnostics the editor shows in this file:", *(f"- {describe(d)}" for d in shown)]
    if len(items) > len(shown):
        lines.append(f"- … and {len(items) - len(shown)} more")
    return "\n".join(lines)
