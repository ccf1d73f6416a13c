"""Gitignore-style pattern sets, always matched by pathspec's pure-Python backend.

pathspec picks its "best" backend from what is installed. With Hyperscan present
(the index's scans use it, `multiscan`) it would match paths with Hyperscan, which
fails on a file name that is not UTF-8 (`bad-\\udcff-name.py`) instead of matching
it, and the deny-list, the walk and the tools must match a path the same way on
every machine. The patterns are few, so the speed is not missed.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

import pathspec


def gitignore_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")


def unanchored(pattern: str) -> str:
    """`pattern` matching at any depth: secrets are secret anywhere, so ".aws/credentials"
    also matches "a/.aws/credentials" (gitignore anchors a pattern with an inner slash
    to the root). A negation ("!x/y") keeps its "!"."""
    if pattern.startswith("!"):
        return "!" + unanchored(pattern[1:])
    body = pattern.rstrip("/")
    if "/" in body and not pattern.startswith(("/", "**/")):
        return "**/" + pattern
    return pattern


def fast_matcher(patterns: list[str]) -> Callable[[str], bool]:
    """Whether a path matches the gitignore `patterns`, as one regex: pathspec tries
    pattern by pattern, which dominated `fs.list` and the sandbox's walk on large trees.
    With negated patterns ("!x") the order matters, so those lists keep pathspec's own
    matching."""
    spec = gitignore_spec(patterns)
    parts = []
    for pattern in spec.patterns:
        if pattern.include is None:  # blank line or comment
            continue
        if not pattern.include or pattern.regex is None:
            return spec.match_file
        parts.append(re.sub(r"\(\?P<[^>]+>", "(?:", pattern.regex.pattern))
    if not parts:
        return lambda path: False
    combined = re.compile("|".join(f"(?:{p})" for p in parts))
    return lambda path: combined.search(path) is not None
