"""The repo map: files with their top-level symbols, trimmed to a token budget.

It is the planner's bird's-eye view. Files relevant to the query come first
(in rank order), then the rest, shallow paths before deep ones. Tokens are
estimated at ~4 characters each; the map stops at the budget and says how many
files it left out, so the planner knows the view is partial.
"""

from __future__ import annotations

from typing import Iterable

from .symbols import Symbol

CHARS_PER_TOKEN = 4
MAX_SYMBOLS_PER_FILE = 24


def overview_order(paths: Iterable[str]) -> list[str]:
    """Shallow files first (entry points, top-level modules), then by path."""
    return sorted(paths, key=lambda p: (p.count("/"), p))


def render_file(path: str, symbols: list[Symbol]) -> str:
    lines = [path]
    for sym in symbols[:MAX_SYMBOLS_PER_FILE]:
        lines.append(f"  {sym.kind} {sym.name}  L{sym.line}")
    if len(symbols) > MAX_SYMBOLS_PER_FILE:
        lines.append(f"  … {len(symbols) - MAX_SYMBOLS_PER_FILE} more symbols")
    return "\n".join(lines)


def render(entries: Iterable[tuple[str, list[Symbol]]], total_files: int, token_budget: int) -> str:
    """Concatenate file blocks until the budget (in ~tokens) would be exceeded."""
    budget = max(0, token_budget * CHARS_PER_TOKEN - 40)  # room for the "more files" line
    blocks: list[str] = []
    used = 0
    for path, symbols in entries:
        block = render_file(path, symbols)
        if used + len(block) + 1 > budget:
            # A file whose symbols do not fit is still worth naming.
            if used + len(path) + 1 <= budget:
                blocks.append(path)
                used += len(path) + 1
                continue
            break
        blocks.append(block)
        used += len(block) + 1
    left_out = total_files - len(blocks)
    if left_out > 0:
        blocks.append(f"… {left_out} more files not shown")
    return "\n".join(blocks)
