"""Patch staging: unified diffs -> validated, located PatchSets; merge, apply, undo."""

from deepseek_ls.patch.gate import SafetyGate
from deepseek_ls.patch.model import ApplyResult, FileChange, FileOutcome, Hunk, MergeResult, PatchError, PatchSet
from deepseek_ls.patch.store import HunkSettled, PatchStore

__all__ = [
    "ApplyResult",
    "FileChange",
    "FileOutcome",
    "Hunk",
    "MergeResult",
    "HunkSettled",
    "PatchError",
    "PatchSet",
    "PatchStore",
    "SafetyGate",
]
