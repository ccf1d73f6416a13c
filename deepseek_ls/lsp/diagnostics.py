"""Published diagnostics, several features to one URI: `textDocument/publishDiagnostics` replaces
everything the server said about a URI, so each feature sets its own list (`publish(ls, source, uri,
diagnostics)`) and the client gets the union. A review's findings are one such source
(`lsp/review.py`); pending hunks are another (`lsp/hunk_actions.py`) without the two erasing each other.

A source published with `pull=True` goes to clients that pull diagnostics (`textDocument/diagnostic`)
and can be told to pull again (`workspace/diagnostic/refresh`) through the pull answer only; other
clients get it pushed. One way per client: an editor showing both would show every item twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable
from weakref import WeakKeyDictionary

from lsprotocol import types

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

# Per connection: {uri: {source: [Diagnostic]}} pushed, and the same for the pulled sources.
_PUBLISHED: WeakKeyDictionary[DeepSeekServer, dict[str, dict[str, list[types.Diagnostic]]]] = WeakKeyDictionary()
_PULLED: WeakKeyDictionary[DeepSeekServer, dict[str, dict[str, list[types.Diagnostic]]]] = WeakKeyDictionary()


def pulls(ls: DeepSeekServer) -> bool:
    """The client pulls diagnostics and can be asked to pull again when they change."""
    return ls.client_supports("text_document", "diagnostic") and \
        ls.client_supports("workspace", "diagnostics", "refresh_support")


def _set(table: dict[str, dict[str, list[types.Diagnostic]]], source: str, uri: str,
         diagnostics: list[types.Diagnostic]) -> list[types.Diagnostic]:
    sources = table.setdefault(uri, {})
    if diagnostics:
        sources[source] = list(diagnostics)
    else:
        sources.pop(source, None)
    union = [d for items in sources.values() for d in items]
    if not sources:
        table.pop(uri, None)
    return union


def publish(ls: DeepSeekServer, source: str, uri: str, diagnostics: list[types.Diagnostic], *,
            pull: bool = False, refresh: bool = True) -> None:
    """Set `source`'s diagnostics of `uri` (an empty list clears them) and send the union; with
    `pull`, a client that pulls is asked to pull again instead."""
    if pull and pulls(ls):
        before = _PULLED.get(ls, {}).get(uri, {}).get(source, [])
        _set(_PULLED.setdefault(ls, {}), source, uri, diagnostics)
        if refresh and before != diagnostics:
            ls.tasks.spawn(ls.workspace_diagnostic_refresh_async(None), "diagnostic refresh")
        return
    union = _set(_PUBLISHED.setdefault(ls, {}), source, uri, diagnostics)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=union))


def pull_diagnostics(ls: DeepSeekServer, params: types.DocumentDiagnosticParams) -> types.RelatedFullDocumentDiagnosticReport:
    """`textDocument/diagnostic`: the pulled sources' diagnostics of the document (the pushed ones
    are not repeated here)."""
    for listener in _BEFORE_PULL.get(ls, []):
        listener(params.text_document.uri)
    sources = _PULLED.get(ls, {}).get(params.text_document.uri, {})
    return types.RelatedFullDocumentDiagnosticReport(items=[d for items in sources.values() for d in items])


# Features that bring a URI's pulled diagnostics up to date before it is answered.
_BEFORE_PULL: WeakKeyDictionary[DeepSeekServer, list[Callable[[str], None]]] = WeakKeyDictionary()


def before_pull(ls: DeepSeekServer, listener: Callable[[str], None]) -> None:
    _BEFORE_PULL.setdefault(ls, []).append(listener)


def uris_of(ls: DeepSeekServer, source: str) -> list[str]:
    """The URIs `source` has diagnostics on now."""
    return [uri for table in (_PUBLISHED, _PULLED) for uri, sources in table.get(ls, {}).items() if source in sources]


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier="deepseek", inter_file_dependencies=False, workspace_diagnostics=False))(pull_diagnostics)
