"""Where each staged hunk sits in the buffer *as it is now*.

Lenses, hover and `deepseek/hunks` all need the pending hunks of a document
with their current line range. Staged patches live on disk (`PatchStore`); the
buffer may have moved since staging. `HunkViews` reads the patch sets once per
change of the patch directory and locates each hunk's old text in the current
text once per document version, so a lens or hover request is a dict lookup.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)


def split_lines(text: str) -> list[str]:
    """The patch store's line splitting (imported on first use: keeps start-up light)."""
    from deepseek_ls.patch.hunks import split_lines as split

    return split(text)


@dataclass(frozen=True)
class HunkView:
    patch_id: str
    hunk_id: str
    file: str
    status: str
    old_text: str
    new_text: str
    lines: tuple[str, ...]
    session_id: str | None
    # 0-based [start, end) lines of the hunk's old text in the current text; None
    # when the text no longer contains it (accepting needs a 3-way merge).
    start: int | None
    end: int | None
    expected_start: int
    located: str = "exact"  # how staging matched the model's hunk (patch.model.LOCATED_LABELS)
    recounted: bool = False

    @property
    def anchor_line(self) -> int:
        """The line where the hunk's lenses go: its first changed line."""
        return self.removed_at()

    def added_lines(self) -> list[int]:
        """0-based lines (in the text after accepting) that this hunk adds."""
        return self._rows("+")

    def removed_lines(self) -> list[int]:
        """0-based lines (in the current text) that accepting this hunk removes."""
        return self._rows("-")

    def _rows(self, tag: str) -> list[int]:
        """0-based rows of the `tag` lines, counted in the text that holds them (context and `tag`)."""
        out, row = [], self.start if self.start is not None else self.expected_start
        for line in self.lines:
            if line[:1] == tag:
                out.append(row)
                row += 1
            elif line[:1] == " ":
                row += 1
        return out

    def removed_at(self) -> int:
        """0-based line of the hunk's first changed line (context lines skipped)."""
        base = self.start if self.start is not None else self.expected_start
        row = base
        for line in self.lines:
            if line[:1] in "+-":
                return row
            if line[:1] == " ":
                row += 1
        return row


def locate(lines: list[str], old: list[str], expected: int) -> int | None:
    """Index where `old` occurs in `lines`, nearest `expected` first (`patch.hunks.find_block`)."""
    from deepseek_ls.patch.hunks import find_block

    return find_block(lines, old, expected)


class HunkViews:
    """Cached hunk positions per file. `list_patches()` returns PatchSets;
    `signature()` changes whenever the stored patches change."""

    def __init__(self, list_patches: Callable[[], list[Any]], patch_dir: Path) -> None:
        self._list_patches = list_patches
        self._patch_dir = patch_dir
        self._signature: Any = None
        self._generation = 0
        self._by_file: dict[str, list[tuple[Any, Any]]] = {}
        self._located: dict[tuple[str, Any], list[HunkView]] = {}

    def invalidate(self) -> None:
        self._signature = None
        self._generation += 1

    def signature(self) -> tuple[int, Any]:
        """Changes whenever the stored patches (or their statuses) change."""
        self._refresh()
        return self._generation, self._signature

    def _refresh(self) -> None:
        try:
            signature = self._patch_dir.stat().st_mtime_ns
        except FileNotFoundError:
            signature = None
        if signature == self._signature and self._signature is not None:
            return
        self._generation += 1
        by_file: dict[str, list[tuple[Any, Any]]] = {}
        for patch in self._list_patches():
            for hunk in patch.hunks:
                by_file.setdefault(hunk.file, []).append((patch, hunk))
        self._by_file = by_file
        self._located = {}
        self._signature = signature

    def files(self) -> list[str]:
        self._refresh()
        return sorted(f for f, items in self._by_file.items() if any(h.status == "pending" for _, h in items))

    def for_file(self, file: str, text: str, text_key: Any, *, include_settled: bool = False) -> list[HunkView]:
        """Hunks of `file` located in `text`; `text_key` (e.g. the buffer version)
        identifies the text for caching."""
        self._refresh()
        key = (file, text_key)
        views = self._located.get(key)
        if views is None:
            views = self._locate_all(file, text)
            # Keep one text per file: older versions are never asked for again.
            self._located = {k: v for k, v in self._located.items() if k[0] != file}
            self._located[key] = views
        if include_settled:
            return views
        return [v for v in views if v.status == "pending"]

    def _locate_all(self, file: str, text: str) -> list[HunkView]:
        lines = split_lines(text)
        views = []
        for patch, hunk in self._by_file.get(file, []):
            start = None
            old = split_lines(hunk.old_text)
            if hunk.status == "pending":
                start = locate(lines, old, hunk.start_index)
            views.append(
                HunkView(
                    patch_id=patch.patch_id,
                    hunk_id=hunk.hunk_id,
                    file=file,
                    status=hunk.status,
                    old_text=hunk.old_text,
                    new_text=hunk.new_text,
                    lines=tuple(hunk.lines),
                    session_id=patch.session_id,
                    start=start,
                    end=None if start is None else start + len(old),
                    expected_start=min(hunk.start_index, len(lines)),
                    located=hunk.located,
                    recounted=hunk.recounted,
                )
            )
        return views

    def find(self, patch_id: str, hunk_id: str) -> tuple[Any, Any] | None:
        self._refresh()
        for items in self._by_file.values():
            for patch, hunk in items:
                if patch.patch_id == patch_id and hunk.hunk_id == hunk_id:
                    return patch, hunk
        return None
