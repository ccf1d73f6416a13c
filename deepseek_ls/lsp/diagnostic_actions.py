"""Other tools' diagnostics as work for DeepSeek: "DeepSeek: Fix …" and "DeepSeek: Explain …" code actions.

For each diagnostic the editor passes in `CodeActionParams.context.diagnostics` that is not our own
(source "deepseek" or "deepseek-review"), two quick fixes carrying `{uri, version, range, diagnostic}`:

- `deepseek.fixDiagnostic` plans a fix scoped to the file (the prompt has the diagnostic's message,
  code, source and the code at its range with a few lines around), then goes on as a `deepseek:`
  comment does (`comment_actions.plan_and_run`): asks whether to run the plan (`plan.execute`, decided
  like every approval) and runs its first step, which ends in pending hunks. Any "no" (deny,
  dismissed, no answer, cancel) runs nothing and leaves the plan.
- `deepseek.explainDiagnostic` asks (the ask path: no plan, no tools, nothing staged or written in the
  workspace's files) and shows the answer as a markdown document under `.deepseek/explanations/` through
  `window/showDocument`; a client without showDocument gets it as `window/showMessage` and in the log.

Both refuse a document that changed since the action was offered (its version moved on). The
prompt reaches the model through the LLM client's redaction, as every prompt does.
`[code_actions] diagnostic_actions` shows or hides the actions.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import code_actions, names, params
from deepseek_ls.lsp.editor_diagnostics import describe, one_line, origin, title
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.uris import current_text, uri_to_relpath

log = logging.getLogger(__name__)

OURS = {names.HUNK_DIAGNOSTIC_SOURCE, names.REVIEW_DIAGNOSTIC_SOURCE}
MAX_DIAGNOSTICS = 10  # per request: a range over a file full of warnings offers the first ones
AROUND = 5  # lines of code sent on either side of the diagnostic's range
SHOWN_CHARS = 2000  # of an explanation in a showMessage (the log has it whole)


class StaleDiagnostic(ValueError):
    """The document changed since the action was offered: the diagnostic may not hold any more."""


def actions(ls: DeepSeekServer, p: types.CodeActionParams) -> list[types.CodeAction]:
    """Fix and Explain for each foreign diagnostic the editor passed."""
    if not ls.config.code_actions.diagnostic_actions or ls.root is None:
        return []
    uri = p.text_document.uri
    if uri_to_relpath(ls.root, uri) is None:
        return []
    foreign = [d for d in p.context.diagnostics if d.source not in OURS][:MAX_DIAGNOSTICS]
    if not foreign:
        return []
    _, version = current_text(ls, uri)
    out: list[types.CodeAction] = []
    for diagnostic in foreign:
        args: dict[str, Any] = {"uri": uri, "range": _range(diagnostic.range),
                                "diagnostic": _diagnostic(diagnostic)}
        if version is not None:
            args["version"] = version
        short = title(diagnostic)
        for label, command in ((f"DeepSeek: Fix {short}", names.CMD_FIX_DIAGNOSTIC),
                               (f"DeepSeek: Explain {short}", names.CMD_EXPLAIN_DIAGNOSTIC)):
            out.append(types.CodeAction(title=label, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                                        command=types.Command(title=label, command=command, arguments=[args])))
    return out


def _range(r: types.Range) -> dict[str, Any]:
    return {"start": {"line": r.start.line, "character": r.start.character},
            "end": {"line": r.end.line, "character": r.end.character}}


def _diagnostic(d: types.Diagnostic) -> dict[str, Any]:
    """What the commands need of the diagnostic (the fields `params.EditorDiagnostic` reads)."""
    out: dict[str, Any] = {"range": _range(d.range), "message": d.message}
    for key in ("severity", "code", "source"):
        value = getattr(d, key)
        if value is not None:
            out[key] = int(value) if key == "severity" else value
    return out


def _checked(ls: DeepSeekServer, a: Any) -> tuple[str, list[str]]:
    """The file's path and lines, after refusing a stale version or a file outside the workspace."""
    if ls.root is None:
        raise ValueError("no workspace folder is open: DeepSeek works on the open workspace's files")
    rel = uri_to_relpath(ls.root, a.uri)
    if rel is None:
        raise ValueError(f"{a.uri} is not a file of the open workspace")
    text, version = current_text(ls, a.uri)
    if a.version is not None and version is not None and version != a.version:
        raise StaleDiagnostic(
            f"{rel} changed since the action was offered (document version {a.version}, now {version}): "
            f"the diagnostic “{title(a.diagnostic)}” may not hold any more. Nothing was run; "
            "ask for code actions on it again.")
    lines = text.split("\n")
    if version is None and not (ls.root / rel).is_file():
        raise ValueError(f"{rel} is neither open in the editor nor a file on disk: nothing to fix or explain")
    if a.diagnostic.range.start.line >= len(lines):
        raise ValueError(f"the diagnostic is on line {a.diagnostic.range.start.line + 1}, past the end of {rel} "
                         f"({len(lines)} lines): ask for code actions on it again")
    return rel, lines


def _around(a: Any, line_count: int) -> dict[str, Any]:
    """The diagnostic's lines and AROUND lines either side, as a range for the editor context."""
    where = a.range or a.diagnostic.range
    first = max(0, where.start.line - AROUND)
    last = min(max(line_count - 1, 0), max(where.end.line, where.start.line) + AROUND)
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}


def _about(a: Any, rel: str) -> str:
    d = a.diagnostic
    lines = f"line {d.range.start.line + 1}" if d.range.end.line <= d.range.start.line \
        else f"lines {d.range.start.line + 1}-{d.range.end.line + 1}"
    code = f"\nCode: {one_line(str(d.code), 200)}" if d.code not in (None, "") else ""
    source = f"\nSource: {one_line(d.source, 200)}" if d.source else ""
    return (f"The editor shows this {origin(d)} on {lines} of {rel}:\n"
            f"Message: {d.message.strip()}{code}{source}\n"
            "The code at that range, with the lines around it, is in the context below.")


async def fix(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.lsp.comment_actions import plan_and_run

    a = params.parse_args(params.DiagnosticArgs, args)
    rel, lines = _checked(ls, a)
    prompt = (f"Fix this diagnostic.\n\n{_about(a, rel)}\n\nFix the cause, not the symptom (do not just silence "
              f"the tool), and change only {rel}.")
    return await plan_and_run(ls, prompt=prompt, uri=a.uri, rel=rel, context_range=_around(a, len(lines)),
                              what=f"fix {title(a.diagnostic)}")


async def explain(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.lsp import commands

    a = params.parse_args(params.DiagnosticArgs, args)
    rel, lines = _checked(ls, a)
    prompt = (f"Explain this diagnostic: what it means here, why the code causes it, and how one would fix it "
              f"(in words and a short snippet; do not rewrite the file).\n\n{_about(a, rel)}")
    answer = await commands.ask(ls, {"prompt": prompt, "uri": a.uri, "range": _around(a, len(lines))})
    content = str(answer.get("content") or "").strip() or "(the model gave no answer)"
    path = _write(ls, answer["session_id"], a, rel, content)
    uri = ls.uri_of(path.relative_to(ls.root).as_posix())
    shown = await _show(ls, uri)
    if not shown:
        short = content if len(content) <= SHOWN_CHARS else content[:SHOWN_CHARS].rstrip() + f"… (whole text: {path})"
        ls.show_message(f"deepseek-ls: {title(a.diagnostic)}\n\n{short}")
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Info,
                                                     message=f"deepseek-ls: explanation of {describe(a.diagnostic)}\n{content}"))
    return {"session_id": answer["session_id"], "uri": uri, "shown": shown, "content": content}


def _write(ls: DeepSeekServer, session_id: str, a: Any, rel: str, content: str) -> Any:
    """`.deepseek/explanations/<session>.md`: the diagnostic and the answer."""
    from deepseek_ls.policy.redact import redact_text

    assert ls.services is not None
    folder = ls.services.state_dir / "explanations"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.md"
    text = (f"# {title(a.diagnostic)}\n\n<!-- deepseek-ls explanation — session {session_id} -->\n\n"
            f"`{rel}`, {describe(a.diagnostic)}\n\n{content}\n")
    path.write_text(redact_text(text), encoding="utf-8")  # a key in the diagnostic's message stays out of it
    return path


async def _show(ls: DeepSeekServer, uri: str) -> bool:
    """Open `uri` in the editor; False when the client cannot (or would not)."""
    if not ls.client_supports("window", "show_document", "support"):
        return False
    try:
        result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    except Exception as error:  # noqa: BLE001 - an editor that fails the request: fall back to a message
        log.warning("window/showDocument %s failed: %s", uri, error)
        return False
    return bool(getattr(result, "success", False))


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    code_actions.add_provider(server, actions)
    command(server, names.CMD_FIX_DIAGNOSTIC, fix)
    command(server, names.CMD_EXPLAIN_DIAGNOSTIC, explain)
