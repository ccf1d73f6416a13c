"""Why max-think: hovering a plan step's lens line or a hunk produced under
max-think shows the router's explanation (score, each signal's contribution,
threshold, profile, model, escalation) and what the session and the step cost
so far (tokens by kind, money)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from deepseek_ls.lsp.code_lens import match_note, step_line, plan_doc_relpath
from deepseek_ls.lsp.edits import views_for_uri
from deepseek_ls.lsp.plan_doc import step_heading_lines
from deepseek_ls.lsp.routing import explanation, find_decision, markdown
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import patch_info, sessions_of
from deepseek_ls.lsp.uris import current_text, uri_to_relpath


def _step_at(ls: DeepSeekServer, uri: str, rel: str, line: int) -> tuple[dict[str, Any], str] | None:
    session_id = sessions_of(ls).active
    view = sessions_of(ls).views.get(session_id or "")
    plan = (view or {}).get("plan")
    if not session_id or not plan:
        return None
    if rel == plan_doc_relpath(session_id):
        text, _ = current_text(ls, uri)
        for step_id, heading in step_heading_lines(text).items():
            if heading == line:
                return view, step_id
        return None
    for step in plan.get("steps", []):
        if rel in step.get("files", []) and step_line(ls, uri, rel, step.get("title", "")) == line:
            return view, step["step_id"]
    return None


def _hunk_decision(ls: DeepSeekServer, uri: str, line: int) -> tuple[dict[str, Any], dict[str, Any], str | None] | None:
    for hunk in views_for_uri(ls, uri):
        start = hunk.start if hunk.start is not None else hunk.expected_start
        end = max(hunk.end if hunk.end is not None else start, hunk.anchor_line + 1)
        if not start <= line < end:
            continue
        info = patch_info(ls, hunk.patch_id)
        if info.get("profile") != "max_think":
            continue
        view = sessions_of(ls).views.get(info.get("session_id") or "", {})
        decision = find_decision(view, decision_id=info.get("decision_id")) if info.get("decision_id") else None
        if decision is None:
            decision = find_decision(view, step_id=info.get("step_id"))
        if decision is not None:
            return decision, view, info.get("step_id")
    return None


def cost_markdown(view: dict[str, Any], step_id: str | None) -> str:
    """What the session (and the step) cost so far: tokens by kind and money, from the session's view."""
    cost = view.get("cost") or {}
    session = cost.get("session")
    if not session or not session.get("calls"):
        return ""
    text = f"\n\n**cost** · session: {session['text']} ({session['calls']} calls)"
    step = (cost.get("steps") or {}).get(step_id or "")
    if step:
        text += f"  \n· this step: {step['text']} ({step['calls']} calls)"  # a Markdown line break
    return text


def hover(ls: DeepSeekServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    if rel is None or ls.services is None:
        return None
    line = params.position.line
    hit = _hunk_decision(ls, uri, line)
    if hit is None:
        found = _step_at(ls, uri, rel, line)
        if found is not None:
            view, step_id = found
            decision = find_decision(view, step_id=step_id)
            hit = (decision, view, step_id) if decision is not None else None
    note = _hunk_match_note(ls, uri, line)
    if hit is None and not note:
        return None
    parts = []
    if hit is not None:
        decision, view, step_id = hit
        parts.append(markdown(explanation(decision)) + cost_markdown(view, step_id))
    if note:
        parts.append(note)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n".join(parts)))


def _hunk_match_note(ls: DeepSeekServer, uri: str, line: int) -> str:
    """For a hunk the model's diff did not match byte for byte: how it was placed."""
    for hunk in views_for_uri(ls, uri):
        start = hunk.start if hunk.start is not None else hunk.expected_start
        end = max(hunk.end if hunk.end is not None else start, hunk.anchor_line + 1)
        if start <= line < end:
            note = match_note(hunk.located, hunk.recounted)
            if note:
                return (f"**Hunk {hunk.hunk_id}**: the model's diff did not match the file byte for byte; "
                        f"it was {note}. Check the change before accepting it.")
    return ""


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
