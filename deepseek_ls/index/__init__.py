"""The code index: tantivy, bound to a manifest, fast enough to ask on every keystroke.

Use `CodeIndex(root, state_dir, config)`; see `code_index.py`. Names are loaded
on first use, so worker processes that only need `analyse` stay light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BuildCancelled": ".build",
    "BuildProgress": ".build",
    "BuildReport": ".build",
    "ChangedPath": ".freshness",
    "CodeIndex": ".code_index",
    "FileHit": ".query",
    "IndexBusy": ".writing",
    "IndexStatus": ".freshness",
    "IndexUnavailable": ".code_index",
    "LineHit": ".query",
    "Manifest": ".manifest",
    "QueryResult": ".query",
    "SkippedFile": ".manifest",
    "Symbol": ".symbols",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .build import BuildCancelled, BuildProgress, BuildReport
    from .code_index import CodeIndex, IndexUnavailable
    from .writing import IndexBusy
    from .freshness import ChangedPath, IndexStatus
    from .manifest import Manifest, SkippedFile
    from .query import FileHit, LineHit, QueryResult
    from .symbols import Symbol


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
