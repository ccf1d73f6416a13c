"""Gitignore-style pattern sets, always matched by pathspec's pure-Python backend.

pathspec picks its "best" backend from what is installed. With Hyperscan present
(the index's scans use it, `multiscan`) it would match paths with Hyperscan, which
fails on a file name that is not UTF-8 (`bad-\\udcff-name.py`) instead of matching
it, and the deny-list, the walk and the tools must match a path the same way on
every machine. The patterns are few, so the speed is not missed.
"""

from __future__ import annotations

from typing import Iterable

import pathspec


def gitignore_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
