"""File URIs <-> workspace-relative paths, and the open buffers behind them."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pygls.uris import from_fs_path, to_fs_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.workspace import TextDocument


def uri_to_relpath(root: Path, uri: str) -> str | None:
    """The POSIX path of `uri` relative to `root`, or None when it lies outside.
    Cached: lenses and hovers ask for the same few URIs on every request."""
    return _relpath_cached(root, uri)


@functools.lru_cache(maxsize=4096)
def _relpath_cached(root: Path, uri: str) -> str | None:
    path = to_fs_path(uri)
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def relpath_to_uri(root: Path, relpath: str, spelled: Path | None = None) -> str:
    """The file URI of the workspace file `relpath`: its resolved path, written under `spelled`
    (the editor's spelling of `root`, e.g. through a symlink: `DeepSeekServer.uri_of`) when it
    lies inside `root`. A path that resolves outside `root` (a symlink out of the workspace) keeps
    its real path: the editor's spelling never makes an outside file look like a workspace one."""
    path = (root / relpath).resolve()
    if spelled is not None:
        try:
            path = spelled / path.relative_to(root.resolve())
        except ValueError:
            pass
    uri = from_fs_path(str(path))
    if uri is None:
        raise ValueError(f"cannot make a file URI of {relpath!r}")
    return uri


def editor_spelling(candidate: str, root: Path) -> Path | None:
    """The editor's own spelling of the workspace root `root` (its resolved path), when it names
    it otherwise (through a symlink): absolute, normalised, symlinks kept. None when it is `root`
    or does not lead there."""
    spelled = Path(os.path.normpath(os.path.abspath(candidate)))
    if spelled == root:
        return None
    try:
        return spelled if spelled.resolve() == root else None
    except OSError:
        return None


def open_document(ls: LanguageServer, uri: str) -> TextDocument | None:
    """The editor's buffer for `uri` when the client has it open, else None."""
    return ls.workspace.text_documents.get(unquote(uri))


def current_text(ls: LanguageServer, uri: str) -> tuple[str, int | None]:
    """What the person sees: the open buffer and its version, else the file on disk
    (version None; missing file = empty text)."""
    doc = open_document(ls, uri)
    if doc is not None:
        return doc.source, doc.version
    path = to_fs_path(uri)
    if path is None or not Path(path).is_file():
        return "", None
    # No newline translation: CRLF files must round-trip exactly.
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        return fh.read(), None


def same_file_key(uri: str) -> str:
    """One key for the URIs that may name one file, however spelled: `.`/`..`/`//` segments,
    a path through a symlink, letter case (over-merging on a case-sensitive file system: used
    only to refuse, never to pick a buffer). Percent-encoding is already one name (unquoted)."""
    path = to_fs_path(unquote(uri)) if uri.startswith("file:") else None
    if not path:
        return unquote(uri)
    return os.path.realpath(path).casefold()


def aliases(ls: LanguageServer, uri: str) -> list[str]:
    """The open documents (their keys) naming the file of `uri` under another URI."""
    own = unquote(uri)
    documents = [key for key in list(ls.workspace.text_documents) if key != own]
    if not documents:
        return []
    key = same_file_key(uri)
    return [other for other in documents if same_file_key(other) == key]
