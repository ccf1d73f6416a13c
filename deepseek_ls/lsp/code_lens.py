"""Code lenses: plan steps (on their target files and on the plan document) and
staged hunks (Accept / Reject, and Accept all / Reject all per file)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.lsp.edits import patches_signature, text_key, views_for_uri
from deepseek_ls.lsp.plan_doc import status_mark, step_heading_lines, symbol_line
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import sessions_of
from deepseek_ls.lsp.uris import current_text, uri_to_relpath

log = logging.getLogger(__name__)

PLANS_DIR = ".deepseek/plans"


@dataclass
class LensCache:
    """The lens feature's state of one connection (`DeepSeekServer.feature_state`): each
    document's lenses with what they were computed from, and the line of each plan step
    in its target file."""

    lenses: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    step_lines: dict[tuple[Any, ...], int] = field(default_factory=dict)


def plan_doc_relpath(session_id: str) -> str:
    return f"{PLANS_DIR}/{session_id}.md"


def _lens(line: int, title: str, command: str, args: dict[str, Any]) -> types.CodeLens:
    position = types.Position(line=line, character=0)
    return types.CodeLens(
        range=types.Range(start=position, end=position),
        command=types.Command(title=title, command=command, arguments=[args]),
    )


def step_lenses(session_id: str, number: int, step: dict[str, Any], line: int,
                lane: dict[str, Any] | None = None) -> list[types.CodeLens]:
    status = step.get("status", "pending")
    ids = {"session_id": session_id, "step_id": step.get("step_id")}
    title = f"▶ Step {number}: {step.get('title', '')} [{status_mark(status)} {status}]"
    if lane is not None:  # teammate lanes: which lane runs (or ran) it, and how that went
        title += f" · lane {lane.get('lane')}: {lane.get('state')}"
    runnable = status in ("pending", "failed")
    lenses = [_lens(line, title, names.CMD_RUN_STEP if runnable else names.CMD_SHOW_PLAN, ids if runnable else {"session_id": session_id})]
    if runnable:
        lenses.append(_lens(line, "Skip", names.CMD_SKIP_STEP, ids))
    lenses.append(_lens(line, "Revise…", names.CMD_REVISE_PLAN, {**ids, "feedback": ""}))
    return lenses


def step_line(ls: DeepSeekServer, uri: str, rel: str, title: str) -> int:
    cache = ls.feature_state(LensCache).step_lines
    key = (rel, text_key(ls, uri), title)
    line = cache.get(key)
    if line is None:
        if len(cache) > 2000:
            cache.clear()
        text, _ = current_text(ls, uri)
        line = cache[key] = symbol_line(text, title)
    return line


def plan_lenses(ls: DeepSeekServer, uri: str, rel: str) -> list[types.CodeLens]:
    session_id = sessions_of(ls).active
    view = sessions_of(ls).views.get(session_id or "")
    plan = (view or {}).get("plan")
    if not session_id or not plan:
        return []
    steps = plan.get("steps", [])
    lanes = {lane["step_id"]: lane for lane in ((view or {}).get("lanes") or {}).get("lanes", [])}
    out: list[types.CodeLens] = []
    if rel == plan_doc_relpath(session_id):
        text, _ = current_text(ls, uri)
        headings = step_heading_lines(text)
        for n, step in enumerate(steps, start=1):
            if step.get("step_id") in headings:
                out += step_lenses(session_id, n, step, headings[step["step_id"]], lanes.get(step["step_id"]))
        return out
    for n, step in enumerate(steps, start=1):
        if rel in step.get("files", []):
            out += step_lenses(session_id, n, step, step_line(ls, uri, rel, step.get("title", "")),
                               lanes.get(step["step_id"]))
    return out


def match_note(located: str, recounted: bool) -> str:
    """How a hunk was matched when not byte for byte ("" when exact), for hover; lens titles show
    only content-level matches (an offset or a recounted header changes no text)."""
    from deepseek_ls.patch.model import LOCATED_LABELS

    parts = [LOCATED_LABELS.get(located, located)] if located != "exact" else []
    if recounted:
        parts.append("@@ counts recounted")
    return "matched " + ", ".join(parts) if parts else ""


def hunk_lenses(ls: DeepSeekServer, uri: str) -> list[types.CodeLens]:
    out: list[types.CodeLens] = []
    patches_here: dict[str, int] = {}
    for view in views_for_uri(ls, uri):
        ids = {"patch_id": view.patch_id, "hunk_id": view.hunk_id}
        line = view.anchor_line
        suffix = " (rebase)" if view.start is None else ""
        how = match_note(view.located, False) if view.located not in ("exact", "offset") else ""
        if how:
            suffix += f" ({how})"  # the model's hunk did not match byte for byte: say how it was placed
        out.append(_lens(line, f"Accept{suffix}", names.CMD_ACCEPT_HUNK, ids))
        out.append(_lens(line, "Reject", names.CMD_REJECT_HUNK, ids))
        patches_here[view.patch_id] = patches_here.get(view.patch_id, 0) + 1
    for patch_id, count in patches_here.items():
        args = {"patch_id": patch_id, "uri": uri}
        out.append(_lens(0, f"Accept all ({count})", names.CMD_ACCEPT_FILE, args))
        out.append(_lens(0, "Reject all", names.CMD_REJECT_FILE, args))
    return out


def _cache_key(ls: DeepSeekServer, uri: str) -> tuple[Any, ...]:
    """What the lenses of `uri` depend on: its text, the staged patches, the plan."""
    patches = patches_signature(ls)
    sessions = sessions_of(ls)
    return (text_key(ls, uri), patches, sessions.active, sessions.generation)


def code_lens(ls: DeepSeekServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    rel = uri_to_relpath(ls.root, uri) if ls.root else None
    if rel is None or ls.services is None:
        return []
    key = _cache_key(ls, uri)
    cache = ls.feature_state(LensCache).lenses
    cached = cache.get(uri)
    if cached is not None and cached[0] == key:
        return cached[1]
    lenses = _compute(ls, uri, rel)
    cache[uri] = (key, lenses)
    return lenses


def _compute(ls: DeepSeekServer, uri: str, rel: str) -> list[types.CodeLens]:
    lenses: list[types.CodeLens] = []
    # Each kind on its own: a failing hunk lookup must not hide the plan.
    from deepseek_ls.lsp.mission import mission_lenses

    for kind, make in (("plan", lambda: plan_lenses(ls, uri, rel)), ("hunk", lambda: hunk_lenses(ls, uri)),
                       ("mission", lambda: mission_lenses(ls, uri, rel))):
        try:
            lenses += make()
        except Exception:  # noqa: BLE001 - logged; the other kind still shows
            log.exception("%s lenses failed for %s", kind, rel)
    return lenses


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(code_lens)
