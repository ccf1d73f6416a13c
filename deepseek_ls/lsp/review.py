"""The editor's review: `deepseek.review` shows findings as diagnostics; code actions apply or dismiss them.

`deepseek.review {staged?, base?, paths?, focus?}` runs the agent's review (agent/review.py:
read-only, recorded as a review session) and publishes each finding as a diagnostic on its
file (`source` "deepseek-review", severity from the finding, `code` its category, `data` its
fingerprint). A new review replaces the previous one's diagnostics. On a finding's lines
`textDocument/codeAction` offers "Apply fix" (when it has one: `deepseek.applyReviewFix` stages
it as a pending patch — then the usual Accept / Reject lenses and commands) and "Dismiss"
(`deepseek.dismissFinding`: gone now, and left out of later reviews while its code is unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from lsprotocol import types

from deepseek_ls.lsp import code_actions, diagnostics, names, params
from deepseek_ls.lsp.edits import changed
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, driving, refresh_session
from deepseek_ls.lsp.uris import current_text, uri_to_relpath

SOURCE = names.REVIEW_DIAGNOSTIC_SOURCE
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "note": types.DiagnosticSeverity.Information}


@dataclass
class Shown:
    """The review whose findings the editor shows: {fingerprint: finding} and each one's diagnostic."""

    session_id: str | None = None
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagnostics: dict[str, types.Diagnostic] = field(default_factory=dict)


_SHOWN: WeakKeyDictionary[DeepSeekServer, Shown] = WeakKeyDictionary()


def shown(ls: DeepSeekServer) -> Shown:
    return _SHOWN.setdefault(ls, Shown())


async def review(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.agent.review_dismiss import DismissedFindings
    from deepseek_ls.agent.review_input import ReviewSource

    a = params.parse_args(params.ReviewArgs, args)
    kind = "staged" if a.staged else "base" if a.base else "worktree"
    source = ReviewSource(kind=kind, base=a.base, paths=a.paths)
    assert ls.root is not None and ls.services is not None
    dismissed = DismissedFindings(ls.services.state_dir, ls.root).fingerprints()
    async with driving(ls, "DeepSeek: reviewing", None) as drive:
        result = await agent(ls).review(source, focus=a.focus, dismissed=dismissed, on_session=drive.attach)
    if result.session_id:
        refresh_session(ls, result.session_id, make_active=False)
    show(ls, result.session_id, result.findings)
    out = result.to_json()
    out["findings"] = [{**f, "uri": ls.uri_of(f["file"])} for f in result.findings]
    ls.show_message(f"deepseek-ls: {_said(out)}",
                    types.MessageType.Info if out["complete"] else types.MessageType.Warning)
    return out


def _said(review: dict[str, Any]) -> str:
    if review["note"]:
        return review["note"]
    counts = review["counts"]
    text = (f"review: {len(review['findings'])} finding(s) ({counts['error']} error, {counts['warning']} warning, "
            f"{counts['note']} note) in {len(review['files'])} file(s)")
    if review["dropped"]["count"]:
        text += f"; {review['dropped']['count']} dropped (outside the diff)"
    for failed in review["failed"]:
        text += f"; not reviewed: {', '.join(failed['files'])}: {failed['error']}"
    return text


def show(ls: DeepSeekServer, session_id: str | None, findings: list[dict[str, Any]]) -> None:
    """Publish `findings` as the review's diagnostics, replacing the previous review's everywhere."""
    state = _SHOWN[ls] = Shown(session_id, {f["fingerprint"]: f for f in findings})
    by_uri: dict[str, list[types.Diagnostic]] = {}
    for f in findings:
        uri = ls.uri_of(f["file"])
        state.diagnostics[f["fingerprint"]] = diagnostic = _diagnostic(ls, uri, f)
        by_uri.setdefault(uri, []).append(diagnostic)
    for uri in set(diagnostics.uris_of(ls, SOURCE)) - set(by_uri):
        diagnostics.publish(ls, SOURCE, uri, [])
    for uri, items in by_uri.items():
        diagnostics.publish(ls, SOURCE, uri, items)


def _diagnostic(ls: DeepSeekServer, uri: str, finding: dict[str, Any]) -> types.Diagnostic:
    text, _ = current_text(ls, uri)
    lines = text.split("\n")
    first, last = finding["start_line"] - 1, finding["end_line"] - 1
    end = types.Position(line=last, character=len(lines[last].rstrip("\r"))) if last < len(lines) else \
        types.Position(line=last, character=0)
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=first, character=0), end=end),
        message=finding["message"] + ("\n(a fix is suggested: code action \"Apply fix\")" if finding.get("suggested_fix") else ""),
        severity=_SEVERITY[finding["severity"]], source=SOURCE, code=finding["category"],
        data={"fingerprint": finding["fingerprint"], "session_id": shown(ls).session_id},
    )


def actions(ls: DeepSeekServer, p: types.CodeActionParams) -> list[types.CodeAction]:
    """"Apply fix" and "Dismiss" for the findings on the requested lines."""
    state = shown(ls)
    if not state.findings or ls.root is None:
        return []
    rel = uri_to_relpath(ls.root, p.text_document.uri)
    out: list[types.CodeAction] = []
    for fp, f in state.findings.items():
        if f["file"] != rel or not (f["start_line"] - 1 <= p.range.end.line and p.range.start.line <= f["end_line"] - 1):
            continue
        diagnostic = state.diagnostics[fp]
        short = f["message"].splitlines()[0][:60]
        if f.get("suggested_fix"):
            out.append(types.CodeAction(
                title=f"Apply fix: {short}", kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                is_preferred=True,
                command=types.Command(title="Apply fix", command=names.CMD_APPLY_REVIEW_FIX, arguments=[{"fingerprint": fp}])))
        out.append(types.CodeAction(
            title=f"Dismiss review finding: {short}", kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
            command=types.Command(title="Dismiss", command=names.CMD_DISMISS_FINDING, arguments=[{"fingerprint": fp}])))
    return out


def _current(ls: DeepSeekServer, fingerprint: str) -> tuple[str, dict[str, Any]]:
    state = shown(ls)
    finding = state.findings.get(fingerprint)
    if finding is None or state.session_id is None:
        raise LookupError(f"no finding {fingerprint} in the review the editor shows: run deepseek.review again")
    return state.session_id, finding


async def apply_fix(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.FindingArgs, args)
    session_id, finding = _current(ls, a.fingerprint)
    patch = await agent(ls).stage_review_fix(session_id, a.fingerprint)
    refresh_session(ls, session_id, make_active=False)
    changed(ls, [finding["file"]])
    return {"patch_id": patch.patch_id, "hunk_ids": [h.hunk_id for h in patch.hunks],
            "uri": ls.uri_of(finding["file"]), "session_id": session_id}


async def dismiss(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.FindingArgs, args)
    session_id, finding = _current(ls, a.fingerprint)
    await agent(ls).dismiss_finding(session_id, a.fingerprint)
    state = shown(ls)
    state.findings.pop(a.fingerprint, None)
    state.diagnostics.pop(a.fingerprint, None)
    uri = ls.uri_of(finding["file"])
    rest = [state.diagnostics[fp] for fp, f in state.findings.items() if f["file"] == finding["file"]]
    diagnostics.publish(ls, SOURCE, uri, rest)
    return {"dismissed": True, "fingerprint": a.fingerprint, "uri": uri}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_REVIEW, review)
    command(server, names.CMD_APPLY_REVIEW_FIX, apply_fix)
    command(server, names.CMD_DISMISS_FINDING, dismiss)
    code_actions.add_provider(server, actions)
