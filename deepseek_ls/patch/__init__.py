"""Patch staging: unified diffs -> validated, located PatchSets; merge, apply, undo.

The names below are imported on first use (PEP 562): `from deepseek_ls.store import seal`, which
the event store needs to list sessions, must not load the gate's config models (pydantic) with
them (`deepseek-ls sessions` start-up, bench/bench_cli_startup.py)."""

from __future__ import annotations

import importlib

_WHERE = {
    "SafetyGate": "gate",
    "ApplyResult": "model",
    "FileChange": "model",
    "FileOutcome": "model",
    "Hunk": "model",
    "MergeResult": "model",
    "PatchError": "model",
    "PatchSet": "model",
    "PatchStore": "store",
    "HunkSettled": "store",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
