"""Document sync in the negotiated position encoding, with LSP's line breaks.

pygls 2.x applies incremental `didChange` events itself (its `TextDocument`
and `PositionCodec`). Two of its choices corrupt buffers, so they are
overridden here, once, at `initialize`:

* `TextDocument.lines` splits with `str.splitlines`, which also breaks at
  form feed, U+001C..U+001E, U+0085 and U+2028/9; the client does not, so every
  change below such a character lands on the wrong line. `LspTextDocument`
  splits only at "\\n", "\\r\\n" and "\\r" (`positions.lsp_lines`).
* `PositionCodec.position_from_client_units` moves a column past the end of a
  line to one unit *before* its end, and for a line past the end returns a
  column in client units where code points are meant. `EncodingCodec` reads
  positions with `positions.from_units`.

The negotiation itself (`general.positionEncodings`, client's first choice
among utf-8/utf-16/utf-32, else utf-16) is pygls's and is kept.

Every change is checked before pygls applies it (`buffer_sync`): a change to a
document never opened (pygls would raise), a range outside the buffer, a version
that does not increase, a change under another URI of an open file (`./`, case,
a symlink), or a sync notification the transport dropped leaves the server unable
to know the buffer, which refuses applies to it until the editor
sends the whole text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.positions import ENCODINGS, UTF16, from_units, lsp_lines, negotiated, to_units, units
from deepseek_ls.lsp.uris import aliases

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer


class EncodingCodec(PositionCodec):
    """pygls's codec with every conversion done by `positions`."""

    @property
    def encoding_name(self) -> str:
        value = getattr(self.encoding, "value", self.encoding)
        return value if value in ENCODINGS else UTF16

    def client_num_units(self, string: str) -> int:
        return units(string, self.encoding_name)

    def position_from_client_units(self, lines: Sequence[str], position: types.Position) -> ServerTextPosition:
        if not lines:
            return ServerTextPosition(0, 0)
        if position.line >= len(lines):
            last = lines[-1]
            if last.endswith(("\n", "\r")):
                return ServerTextPosition(len(lines), 0)  # the empty line after the last line break
            return ServerTextPosition(len(lines) - 1, len(last))
        line = max(position.line, 0)
        return ServerTextPosition(line, from_units(lines[line], position.character, self.encoding_name))

    def position_to_client_units(self, lines: Sequence[str], position: Any) -> types.Position:
        if position.line >= len(lines):
            return types.Position(line=len(lines), character=0)
        return types.Position(
            line=position.line, character=to_units(lines[position.line], position.character, self.encoding_name)
        )


class LspTextDocument(TextDocument):
    """A pygls document whose lines are the client's lines."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(lsp_lines(self.source))


def range_problem(lines: Sequence[str], change_range: types.Range) -> str | None:
    """Why a change's range cannot be a range of the buffer `lines` (None: it can). A
    column past the end of a line is that line's end (LSP); a line past the end is not."""
    start, end = change_range.start, change_range.end
    for name, pos in (("start", start), ("end", end)):
        if pos.line > len(lines) or (pos.line == len(lines) and pos.character > 0):
            return f"a change whose range {name} (line {pos.line}) is past the end of the buffer ({len(lines)} lines)"
    if (end.line, end.character) < (start.line, start.character):
        return "a change whose range ends before it starts"
    return None


def check_changes(ls: Any, workspace: Any) -> None:
    """Check every `didChange` content change before pygls applies it (module docstring)."""
    sync = ls.feature_state(BufferSync)
    apply_change = workspace.update_text_document

    def update(text_doc: types.VersionedTextDocumentIdentifier, change: Any) -> None:
        doc = workspace.text_documents.get(unquote(text_doc.uri))
        if doc is None:
            sync.broken(text_doc.uri, "a change to a document the editor never opened")
            for alias in aliases(ls, text_doc.uri):  # the editor may mean this buffer, under another name
                sync.broken(alias, f"a change sent for {text_doc.uri[:200]}, another URI of this file")
            return
        version_problem = sync.version_problem(text_doc.uri, text_doc.version)
        if version_problem is not None:
            sync.broken(text_doc.uri, version_problem)  # taken all the same: the text is never dropped
        if isinstance(change, types.TextDocumentContentChangeWholeDocument):
            apply_change(text_doc, change)
            if version_problem is None:
                sync.heard(text_doc.uri, whole_text=True)
            return
        problem = range_problem(doc.lines, change.range)
        if problem is not None:
            sync.broken(text_doc.uri, problem)
        apply_change(text_doc, change)

    workspace.update_text_document = update


def dropped(ls: Any, method: str, data: dict[str, Any]) -> None:
    """A sync notification the transport could not read: the buffer it was about is unknown."""
    if method not in (types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_OPEN):
        return
    params = data.get("params")
    document = params.get("textDocument") if isinstance(params, dict) else None
    uri = document.get("uri") if isinstance(document, dict) else None
    if isinstance(uri, str) and uri:
        what = "a change" if method == types.TEXT_DOCUMENT_DID_CHANGE else "an open"
        ls.feature_state(BufferSync).broken(uri, f"{what} the server could not read")


def install(ls: DeepSeekServer) -> None:
    """Use `EncodingCodec` and `LspTextDocument` for every document of this
    connection, and check every change. Called in `initialize` (after pygls
    negotiated the encoding, before any document is opened)."""
    workspace = ls.workspace
    codec = EncodingCodec(encoding=negotiated(ls))
    sync_kind = workspace._sync_kind  # noqa: SLF001 - pygls 2.x has no public hook for the document class

    def create(doc_uri: str, source: str | None = None, version: int | None = None,
               language_id: str | None = None) -> TextDocument:
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=sync_kind, position_codec=codec)

    workspace._position_codec = codec  # noqa: SLF001
    workspace._create_text_document = create  # type: ignore[method-assign]  # noqa: SLF001
    check_changes(ls, workspace)
    ls.protocol.on_dropped = lambda method, data: dropped(ls, method, data)
