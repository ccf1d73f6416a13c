"""`textDocument/inlineCompletion` (LSP 3.18) from the model's fill-in-the-middle endpoint, and,
opted into with `inline_completion.completion_items`, the same suggestion as a plain
`textDocument/completion` item for clients without inline completion (Helix, Emacs).

The work is `agent/completion.InlineCompleter` (context, debounce, supersede, reuse, cost);
this module turns positions into offsets and suggestions into items. A request the editor
cancels (`$/cancelRequest`) cancels the completer's HTTP request with it.
`deepseek/inlineCompletionStatus` says whether it is on (and why not), the counts and the spend.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.lsp.positions import from_units, lsp_lines, negotiated, units
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.uris import current_text, uri_to_relpath

log = logging.getLogger(__name__)

INDEX_RECHECK_SECONDS = 30.0  # without an index, look again this often (a build may have finished)
_WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"


class InlineCompletionState:
    """This connection's completer, remade when the settings change; its ledger and counts kept."""

    def __init__(self) -> None:
        self.completer: Any = None
        self.config: Any = None
        self.ledger: Any = None
        self.stats: Any = None
        self.index_checked = 0.0  # when the index was last looked for (a build may finish later)


def completer(ls: DeepSeekServer) -> Any:
    """The connection's `InlineCompleter` for the current settings (the old one closed when they changed)."""
    from deepseek_ls.agent.completion import CompletionStats, InlineCompleter
    from deepseek_ls.llm.budget import CostLedger

    state = ls.feature_state(InlineCompletionState)
    config = ls.config
    if state.completer is None or state.config is not config:
        if state.completer is not None:
            ls.tasks.spawn(state.completer.aclose(), "close the previous inline completion client")
        assert ls.root is not None
        state.ledger = state.ledger or CostLedger()
        state.stats = state.stats or CompletionStats()
        state.completer = InlineCompleter(config, ls.root, tell=ls.show_warning, ledger=state.ledger,
                                          stats=state.stats)
        state.config = config
        state.index_checked = 0.0
    if state.completer.search is None and time.monotonic() - state.index_checked > INDEX_RECHECK_SECONDS:
        state.index_checked = time.monotonic()
        state.completer.search = _search(ls, config)
    return state.completer


def _search(ls: DeepSeekServer, config: Any) -> Any:
    """Related code from the index when one is built (a completion never starts a build)."""
    from deepseek_ls.agent.completion_context import index_snippets

    if not config.inline_completion.index_hits or ls.services is None:
        return None
    index = ls.services.index_if_built()
    return None if index is None else index_snippets(index, ls.root, config.policy.deny_paths)


def _request(ls: DeepSeekServer, uri: str, position: types.Position) -> Any:
    from deepseek_ls.agent.completion import CompletionRequest

    assert ls.root is not None
    text, _ = current_text(ls, uri)
    start, line = _line_at(text, position.line)
    column = from_units(line, position.character, negotiated(ls))
    return CompletionRequest(uri_to_relpath(ls.root, uri), text, start + column)


def _line_at(text: str, number: int) -> tuple[int, str]:
    """(offset of line `number`, that line with its terminator); past the end, the last line.
    Without a lone CR the newlines are found in C: splitting a 1 MB buffer into lines on every
    keystroke took ~40 ms."""
    if "\r" in text:
        lines = lsp_lines(text)
        if number >= len(lines) and (not text or text[-1] in "\r\n"):
            return len(text), ""  # the empty line after a final line break (where a cursor can be)
        index = min(number, len(lines) - 1)
        return sum(len(item) for item in lines[:index]), lines[index]
    start = 0
    for _ in range(number):
        newline = text.find("\n", start)
        if newline < 0:
            break
        start = newline + 1
    end = text.find("\n", start)
    return start, text[start:] if end < 0 else text[start : end + 1]


async def inline_completion(ls: DeepSeekServer, params: types.InlineCompletionParams) -> types.InlineCompletionList | None:
    if ls.root is None or ls.settings is None:
        return None
    request = _request(ls, params.text_document.uri, params.position)
    text = await completer(ls).suggest(request)
    if not text:
        return None
    here = types.Range(start=params.position, end=params.position)
    return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=text, range=here)])


async def completion(ls: DeepSeekServer, params: types.CompletionParams) -> types.CompletionList | None:
    """The suggestion as one completion item, when `inline_completion.completion_items` is on."""
    if ls.root is None or ls.settings is None or not ls.config.inline_completion.completion_items:
        return None
    request = _request(ls, params.text_document.uri, params.position)
    text = await completer(ls).suggest(request)
    if not text:
        return None
    # The item replaces the word before the cursor with that word and the suggestion: clients
    # filter items by the word typed (Helix, Emacs), which must stay a prefix of the item.
    before = request.text[: request.offset]
    word = before[len(before.rstrip(_WORD_CHARS)) :] if before else ""
    start = types.Position(line=params.position.line,
                           character=params.position.character - units(word, negotiated(ls)))
    here = types.Range(start=start, end=params.position)
    first = next((line.strip() for line in text.splitlines() if line.strip()), text.strip())
    item = types.CompletionItem(
        label=(word + first)[:60], kind=types.CompletionItemKind.Text, detail="DeepSeek",
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"```\n{word}{text}\n```"),
        text_edit=types.TextEdit(range=here, new_text=word + text), filter_text=word + text, sort_text="~",
        insert_text_format=types.InsertTextFormat.PlainText)
    # Incomplete: the next keystroke asks again (and reuses the suggestion while it still fits).
    return types.CompletionList(is_incomplete=True, items=[item])


def inline_status(ls: DeepSeekServer, params: Any) -> dict[str, Any]:
    if ls.root is None or ls.settings is None:
        return {"enabled": False, "reason": "the server is not initialized", "model": None}
    return completer(ls).status()


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())(inline_completion)
    server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions())(completion)
    server.feature(names.REQ_INLINE_COMPLETION_STATUS)(inline_status)
