"""Buffers are the truth: open documents feed the `DocumentOverlay` every agent
read goes through; saves and watched-file changes update the index, debounced
per URI so a burst of saves is one update."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Callable

from lsprotocol import types

from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.uris import open_document, uri_to_relpath

log = logging.getLogger(__name__)

INDEX_DEBOUNCE_SECONDS = 0.3


class Debouncer:
    """Collects keys and calls `flush(keys)` once no new key arrived for `delay`."""

    def __init__(self, delay: float, flush: Callable[[list[str]], None]) -> None:
        self._delay = delay
        self._flush = flush
        self._keys: dict[str, None] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, key: str) -> None:
        self._keys[key] = None
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self._delay, self._fire)

    def _fire(self) -> None:
        keys, self._keys, self._timer = list(self._keys), {}, None
        if keys:
            self._flush(keys)


@dataclass
class DocumentEvents:
    """Who is told when the editor changes or saves a buffer, and the index's debouncer: the
    documents feature's state of one connection (`DeepSeekServer.feature_state`)."""

    # Called with a URI whenever the client opens or changes (`on_change`) / saves (`on_save`) a buffer.
    on_change: list[Callable[[str], None]] = field(default_factory=list)
    on_save: list[Callable[[str], None]] = field(default_factory=list)
    index_debouncer: Debouncer | None = None


def _relpath(ls: DeepSeekServer, uri: str) -> str | None:
    return uri_to_relpath(ls.root, uri) if ls.root is not None else None


def _sync_overlay(ls: DeepSeekServer, uri: str) -> None:
    overlay = ls.services.overlay if ls.services is not None else None
    rel = _relpath(ls, uri)
    doc = open_document(ls, uri)
    if overlay is None or rel is None or doc is None:
        return
    overlay.set(rel, doc.source, doc.version)


def did_open(ls: DeepSeekServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.feature_state(BufferSync).opened(params.text_document.uri, params.text_document.version)
    _sync_overlay(ls, params.text_document.uri)
    _changed(ls, params.text_document.uri)


def did_change(ls: DeepSeekServer, params: types.DidChangeTextDocumentParams) -> None:
    # pygls has already applied the changes to its copy of the buffer (checked by text_sync).
    doc = open_document(ls, params.text_document.uri)
    ls.feature_state(BufferSync).changed(params.text_document.uri, params.text_document.version,
                                         doc.source if doc is not None else None)
    _sync_overlay(ls, params.text_document.uri)
    _changed(ls, params.text_document.uri)


def did_close(ls: DeepSeekServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.feature_state(BufferSync).closed(params.text_document.uri)  # the disk is the text again
    overlay = ls.services.overlay if ls.services is not None else None
    rel = _relpath(ls, params.text_document.uri)
    if overlay is not None and rel is not None:
        overlay.remove(rel)


def did_save(ls: DeepSeekServer, params: types.DidSaveTextDocumentParams) -> None:
    _schedule_index_update(ls, params.text_document.uri)
    for listener in ls.feature_state(DocumentEvents).on_save:
        try:
            listener(params.text_document.uri)
        except Exception:  # noqa: BLE001
            log.exception("save listener failed")


def did_change_watched_files(ls: DeepSeekServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        _schedule_index_update(ls, change.uri)


def _changed(ls: DeepSeekServer, uri: str) -> None:
    """A buffer opened or changed: hunk ranges may have moved (lenses are recomputed on demand);
    an apply waiting for the editor's copy to catch up looks again (`editor_apply`)."""
    for listener in ls.feature_state(DocumentEvents).on_change:
        try:
            listener(uri)
        except Exception:  # noqa: BLE001
            log.exception("document listener failed")


def _schedule_index_update(ls: DeepSeekServer, uri: str) -> None:
    if ls.services is None or not ls.config.index.update_on_save:
        return
    rel = _relpath(ls, uri)
    if rel is None or rel.startswith(".deepseek/") or rel.startswith(".git/"):
        return
    events = ls.feature_state(DocumentEvents)
    debouncer = events.index_debouncer
    if debouncer is None:
        debouncer = events.index_debouncer = Debouncer(
            INDEX_DEBOUNCE_SECONDS, lambda paths: ls.tasks.spawn(_update_index(ls, paths), "index update")
        )
    debouncer.add(rel)


async def _update_index(ls: DeepSeekServer, paths: list[str]) -> None:
    index = ls.services.index_if_built() if ls.services is not None else None
    if index is None:
        return
    log.info("index update: %d file(s)", len(paths))
    await asyncio.to_thread(index.update, paths)


def initialized(ls: DeepSeekServer) -> None:
    """Ask the client to tell us about file changes on disk (when it can)."""
    if not ls.client_supports("workspace", "did_change_watched_files", "dynamic_registration"):
        return
    registration = types.Registration(
        id="deepseek-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
        ),
    )
    ls.tasks.spawn(_register_watcher(ls, registration), "register file watcher")


async def _register_watcher(ls: DeepSeekServer, registration: types.Registration) -> None:
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as error:  # noqa: BLE001 - saves still update the index
        log.warning("the client did not accept a file watcher (%s); only saves update the index", error)


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
