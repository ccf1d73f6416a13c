"""Pending hunks through standard LSP, for editors without our plugins (Helix, Emacs, Sublime, Kate, Zed):
a diagnostic on each pending hunk and "Accept" / "Reject" code actions on it.

The diagnostics (`source` "deepseek", severity Information) say what each hunk changes; they follow the
buffer as it is edited and go once the hunk is settled. The code actions carry the lenses' own commands
(`deepseek.acceptHunk`, `deepseek.rejectHunk`, the file and all variants) with the same arguments, so
accepting from a code action is the lenses' accept: a versioned `workspace/applyEdit`, a 3-way merge or a
refusal when the person edited the lines, the same events. Both are switchable (`[code_actions]`).
"""

from __future__ import annotations

import logging

from lsprotocol import types

from deepseek_ls.lsp import code_actions, diagnostics, names
from deepseek_ls.lsp.documents import DocumentEvents
from deepseek_ls.lsp.edits import HunkState, views_for_uri
from deepseek_ls.lsp.hunk_views import HunkView
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.settings_events import SettingsEvents
from deepseek_ls.lsp.uris import current_text

log = logging.getLogger(__name__)

SOURCE = names.HUNK_DIAGNOSTIC_SOURCE


def changed_rows(view: HunkView) -> tuple[int, int]:
    """First and last line (0-based, inclusive) of the current text the hunk changes; a hunk that
    only adds lines marks the line it adds before."""
    removed = view.removed_lines()
    if removed:
        return removed[0], removed[-1]
    anchor = view.anchor_line
    return anchor, anchor


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe(view: HunkView) -> str:
    """What the hunk does, for the diagnostic's message."""
    added = [line[1:] for line in view.lines if line[:1] == "+"]
    removed = [line[1:] for line in view.lines if line[:1] == "-"]
    if added and removed:
        what = f"replaces {_plural(len(removed), 'line')} with {_plural(len(added), 'line')}"
    elif added:
        what = f"adds {_plural(len(added), 'line')}"
    else:
        what = f"deletes {_plural(len(removed), 'line')}"
    first = next((text.strip() for text in added if text.strip()), "")
    if first:
        what += f": {first[:80]}"
    note = " The file changed since it was proposed: accepting merges it with your edits or refuses." \
        if view.start is None else ""
    return f"DeepSeek proposes a change that {what}.{note} Code action: Accept or Reject."


def _diagnostic(view: HunkView, lines: list[str]) -> types.Diagnostic:
    first, last = changed_rows(view)
    end_char = len(lines[last].rstrip("\r")) if last < len(lines) else 0
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=first, character=0),
                          end=types.Position(line=last, character=end_char)),
        message=describe(view), severity=types.DiagnosticSeverity.Information, source=SOURCE,
        code="pending-change", data={"patch_id": view.patch_id, "hunk_id": view.hunk_id},
    )


def hunk_diagnostics(ls: DeepSeekServer, uri: str) -> list[types.Diagnostic]:
    if not ls.config.code_actions.hunk_diagnostics:
        return []
    views = views_for_uri(ls, uri)
    if not views:
        return []
    text, _ = current_text(ls, uri)
    lines = text.split("\n")
    return [_diagnostic(view, lines) for view in views]


def publish_uri(ls: DeepSeekServer, uri: str) -> None:
    diagnostics.publish(ls, SOURCE, uri, hunk_diagnostics(ls, uri), pull=True)


def publish_files(ls: DeepSeekServer, files: list[str]) -> None:
    """Hunks of `files` changed state: their diagnostics again (and gone where none is pending)."""
    uris = {ls.uri_of(f) for f in files} | set(diagnostics.uris_of(ls, SOURCE))
    for uri in sorted(uris):
        publish_uri(ls, uri)


def _republish(ls: DeepSeekServer) -> None:
    """The switch may have changed: the open buffers' and the shown diagnostics again."""
    open_uris = {doc.uri for doc in list(ls.workspace.text_documents.values())}
    for uri in sorted(open_uris | set(diagnostics.uris_of(ls, SOURCE))):
        publish_uri(ls, uri)


def _on_buffer(ls: DeepSeekServer, uri: str) -> None:
    """A buffer opened or changed: its hunks may have moved (or been typed away). A client that
    pulls asks again after a change by itself."""
    if diagnostics.pulls(ls):
        return
    if uri in diagnostics.uris_of(ls, SOURCE) or views_for_uri(ls, uri):
        publish_uri(ls, uri)


def _touches(view: HunkView, p: types.CodeActionParams) -> bool:
    first, last = changed_rows(view)
    if view.start is not None:
        first, last = min(first, view.start), max(last, view.end - 1 if view.end else view.start)
    return first <= p.range.end.line and p.range.start.line <= last


def _action(title: str, command: str, args: dict, diagnostic: types.Diagnostic | None = None) -> types.CodeAction:
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                            diagnostics=[diagnostic] if diagnostic is not None else None,
                            command=types.Command(title=title, command=command, arguments=[args]))


def actions(ls: DeepSeekServer, p: types.CodeActionParams) -> list[types.CodeAction]:
    """Accept / Reject for each pending hunk the range touches, then this file's and everyone's."""
    if not ls.config.code_actions.hunk_actions:
        return []
    uri = p.text_document.uri
    views = views_for_uri(ls, uri)
    here = [v for v in views if _touches(v, p)]
    if not here:
        return []
    text, _ = current_text(ls, uri)
    lines = text.split("\n")
    out: list[types.CodeAction] = []
    for view in here:
        args = {"patch_id": view.patch_id, "hunk_id": view.hunk_id}
        diagnostic = _diagnostic(view, lines)
        line = changed_rows(view)[0] + 1
        out.append(_action(f"Accept DeepSeek change (line {line})", names.CMD_ACCEPT_HUNK, args, diagnostic))
        out.append(_action(f"Reject DeepSeek change (line {line})", names.CMD_REJECT_HUNK, args, diagnostic))
    for patch_id in dict.fromkeys(v.patch_id for v in here):
        count = sum(1 for v in views if v.patch_id == patch_id)
        if count > 1:
            args = {"patch_id": patch_id, "uri": uri}
            out.append(_action(f"Accept all DeepSeek changes in this file ({count})", names.CMD_ACCEPT_FILE, args))
            out.append(_action(f"Reject all DeepSeek changes in this file ({count})", names.CMD_REJECT_FILE, args))
    out.append(_action("Accept all pending DeepSeek changes", names.CMD_ACCEPT_ALL, {}))
    out.append(_action("Reject all pending DeepSeek changes", names.CMD_REJECT_ALL, {}))
    return out


def register(server: DeepSeekServer) -> None:
    code_actions.add_provider(server, actions)
    server.feature_state(HunkState).changed_listeners.append(lambda files: publish_files(server, files))
    server.feature_state(DocumentEvents).on_change.append(lambda uri: _on_buffer(server, uri))
    diagnostics.before_pull(server, lambda uri: _refresh_pulled(server, uri))
    server.feature_state(SettingsEvents).changed.append(lambda: _republish(server))


def _refresh_pulled(ls: DeepSeekServer, uri: str) -> None:
    """A pull answers from the buffer as it is now (the push path keeps up through `_on_buffer`)."""
    if diagnostics.pulls(ls):
        diagnostics.publish(ls, SOURCE, uri, hunk_diagnostics(ls, uri), pull=True, refresh=False)
