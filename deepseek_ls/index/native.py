"""The index's native part (`_native.c`, compiled by `pip install -e .`), or None.

Optional by design: setup.py marks the extension optional, so an install without
a C compiler still works and every caller falls back to its pure-Python twin
(the same answers, slower). Tests run both and check that they agree.
"""

from __future__ import annotations

from types import ModuleType


def _load() -> ModuleType | None:
    try:
        from . import _native
    except ImportError:
        return None
    return _native


module = _load()
