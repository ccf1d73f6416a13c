"""The code index: tantivy, bound to a manifest, fast enough to ask on every keystroke.

Use `CodeIndex(root, state_dir, config)`; see `code_index.py`.
"""

from .build import BuildCancelled, BuildProgress, BuildReport
from .code_index import CodeIndex, IndexBusy, IndexUnavailable
from .freshness import ChangedPath, IndexStatus
from .manifest import Manifest, SkippedFile
from .query import FileHit, LineHit, QueryResult
from .symbols import Symbol

__all__ = [
    "BuildCancelled",
    "BuildProgress",
    "BuildReport",
    "ChangedPath",
    "CodeIndex",
    "FileHit",
    "IndexBusy",
    "IndexStatus",
    "IndexUnavailable",
    "LineHit",
    "Manifest",
    "QueryResult",
    "SkippedFile",
    "Symbol",
]
