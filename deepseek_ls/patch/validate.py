"""Checks on a parsed diff before anything is located or staged."""

from __future__ import annotations

from deepseek_ls.patch.parse import ParsedFile
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.paths import PathPolicy


def validate_files(
    files: list[ParsedFile], policy: PathPolicy, allowed_files: list[str] | None = None
) -> list[str]:
    """Problems (readable, one per line) with the diff's targets; empty when it may be staged."""
    problems: list[str] = []
    seen: set[str] = set()
    allowed = None
    if allowed_files is not None:
        allowed = set()
        for rel in allowed_files:
            try:
                allowed.add(policy.normalize(rel))
            except PolicyViolation:
                continue
    for f in files:
        label = f.path or "(no path)"
        if f.binary:
            problems.append(f"{label}: binary patches are not supported")
            continue
        for path in {p for p in (f.old_path, f.new_path) if p is not None}:
            try:
                clean = policy.normalize(path)
                policy.resolve(clean)
            except PolicyViolation as exc:
                problems.append(f"{path}: {exc.reason}")
                continue
            if allowed is not None and clean not in allowed:
                problems.append(f"{path}: not among the files this step may change ({sorted(allowed)})")
        if not f.path:
            problems.append("a file header names neither a source nor a target path")
            continue
        if f.path in seen:
            problems.append(f"{f.path}: appears twice in the diff; merge its hunks into one file section")
        seen.add(f.path)
    return problems
