"""Published diagnostics, several features to one URI: `textDocument/publishDiagnostics` replaces
everything the server said about a URI, so each feature sets its own list (`publish(ls, source, uri,
diagnostics)`) and the client gets the union. A review's findings are one such source
(`lsp/review.py`); pending hunks can be another without the two erasing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from lsprotocol import types

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

# Per connection: {uri: {source: [Diagnostic]}}.
_PUBLISHED: WeakKeyDictionary[DeepSeekServer, dict[str, dict[str, list[types.Diagnostic]]]] = WeakKeyDictionary()


def publish(ls: DeepSeekServer, source: str, uri: str, diagnostics: list[types.Diagnostic]) -> None:
    """Set `source`'s diagnostics of `uri` (an empty list clears them) and send the union."""
    by_uri = _PUBLISHED.setdefault(ls, {})
    sources = by_uri.setdefault(uri, {})
    if diagnostics:
        sources[source] = list(diagnostics)
    else:
        sources.pop(source, None)
    union = [d for items in sources.values() for d in items]
    if not sources:
        by_uri.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=union))


def uris_of(ls: DeepSeekServer, source: str) -> list[str]:
    """The URIs `source` has diagnostics on now."""
    return [uri for uri, sources in _PUBLISHED.get(ls, {}).items() if source in sources]
