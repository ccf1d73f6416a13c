"""The agent commands: ask, plan, runStep, skipStep, revisePlan, showPlan,
explainRouting.

Each long command runs under `$/progress` (cancellable) as the session's
current task (`session_views.driving`), so `window/workDoneProgress/cancel`,
`$/cancelRequest` and `deepseek.cancel` all stop it; the agent pauses the session.
"""

from __future__ import annotations

import logging
from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.editor_diagnostics import section
from deepseek_ls.lsp.edits import changed
from deepseek_ls.lsp.plan_doc import feedback_from_comments
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import (
    agent,
    driving,
    patch_info,
    refresh_session,
    sessions_of,
    show_document,
    teammate_mode,
)
from deepseek_ls.lsp.sessions import plan_comments, write_plan_document
from deepseek_ls.lsp.uris import current_text, uri_to_relpath

log = logging.getLogger(__name__)


def editor_context(ls: DeepSeekServer, args: params.AskArgs) -> str | None:
    """The document (or selection) the command was started from, as the agent's context, with the
    diagnostics the editor shows in it."""
    if not args.uri or ls.root is None:
        return None
    rel = uri_to_relpath(ls.root, args.uri)
    if rel is None:
        return None
    text, _ = current_text(ls, args.uri)
    if not _may_share(ls, rel, text):
        return None
    lines = text.splitlines()
    limit = ls.config.agent_loop.max_context_range_lines
    if args.range is not None:
        first, last = args.range.start.line, max(args.range.end.line, args.range.start.line)
    else:
        first, last = 0, len(lines) - 1
    last = min(last, first + limit - 1, max(len(lines) - 1, 0))
    body = "\n".join(lines[first : last + 1])
    context = f"File: {rel} (lines {first + 1}-{last + 1})\n```\n{body}\n```"
    found = section(getattr(args, "diagnostics", None) or [])
    return f"{context}\n\n{found}" if found else context


def _may_share(ls: DeepSeekServer, rel: str, text: str) -> bool:
    """A command started from a secret file (`.env`, a key, a credential file by content)
    does not send that file to the model as context."""
    from deepseek_ls.policy import PathPolicy
    from deepseek_ls.policy.secret_files import secret_kind

    assert ls.root is not None
    if not PathPolicy(ls.root, ls.config.policy.deny_paths).is_allowed(rel) or secret_kind(text) is not None:
        ls.show_warning(f"deepseek-ls: {rel} is a secret file; it is not sent to the model as context.")
        return False
    return True


async def ask(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.AskArgs, args)
    async with driving(ls, "DeepSeek: answering", None) as drive:
        result = await agent(ls).ask(a.prompt, editor_context(ls, a), on_session=drive.attach)
    return result


async def plan(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.PlanArgs, args)
    async with driving(ls, "DeepSeek: planning", None) as drive:
        session_id, new_plan = await agent(ls).plan(
            a.prompt, editor_context(ls, a), a.mode, on_session=lambda sid: drive.attach(sid, make_active=True)
        )
    view = refresh_session(ls, session_id)
    if view.get("hetun"):
        from deepseek_ls.lsp.mission import mission_document_path

        show_document(ls, mission_document_path(ls, session_id))  # the mission card waits for a decision
        return {"session_id": session_id, "plan": new_plan.to_json(), "mission": view["hetun"].get("mission"),
                "mission_uri": ls.uri_of(mission_document_path(ls, session_id).relative_to(ls.root).as_posix())}
    return {"session_id": session_id, "plan": new_plan.to_json()}


async def run_step(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.StepArgs, args)
    try:
        async with driving(ls, "DeepSeek: running step", a.session_id):
            outcome = await agent(ls).run_step(a.session_id, a.step_id, teammate_mode=teammate_mode(ls))
    finally:
        view = refresh_session(ls, a.session_id)
    files = [f for p in view.get("patches", []) if p["patch_id"] in outcome.patch_ids for f in p["files"]]
    changed(ls, files)
    if outcome.message and not outcome.patch_ids:
        ls.show_message(f"deepseek-ls: {outcome.message}")
    return outcome.to_json()


async def skip_step(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.StepArgs, args)
    outcome = await agent(ls).skip_step(a.session_id, a.step_id)
    view = refresh_session(ls, a.session_id)
    changed(ls, [f for p in view.get("patches", []) for f in p.get("files", [])])
    return {**outcome.to_json(), "status": "skipped"}


async def revise_plan(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.ReviseArgs, args)
    feedback = a.feedback.strip()
    view = sessions_of(ls).views.get(a.session_id) or refresh_session(ls, a.session_id)
    if not feedback and view.get("plan"):
        feedback = feedback_from_comments(view["plan"], plan_comments(ls, a.session_id), a.step_id)
    if not feedback:
        if not view.get("plan"):
            raise LookupError(f"session {a.session_id} has no plan to revise")
        # Nothing said yet: open the plan document where the person can say it.
        path = write_plan_document(ls, a.session_id, view["plan"], keep_comments=True)
        show_document(ls, path)
        ls.show_message(
            "deepseek-ls: write your feedback in the plan document as lines starting with '>' under the step, "
            "then choose Revise… again."
        )
        return {"session_id": a.session_id, "plan": view["plan"], "feedback": "", "revised": False}
    try:
        async with driving(ls, "DeepSeek: revising the plan", a.session_id):
            new_plan = await agent(ls).revise_plan(a.session_id, feedback, a.step_id)
    finally:
        refresh_session(ls, a.session_id)
    return {"session_id": a.session_id, "plan": new_plan.to_json(), "feedback": feedback, "revised": True}


async def show_plan(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.SessionArgs, args)
    view = refresh_session(ls, a.session_id)
    if not view.get("plan"):
        raise LookupError(f"session {a.session_id} has no plan")
    path = write_plan_document(ls, a.session_id, view["plan"], keep_comments=True)
    show_document(ls, path)
    return {"uri": ls.uri_of(path.relative_to(ls.root).as_posix())}


def explain_routing(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.ExplainArgs, args)
    decision_id, step_id, session_id = a.decision_id, a.step_id, a.session_id
    if a.patch_id:
        info = patch_info(ls, a.patch_id)
        decision_id = decision_id or info.get("decision_id")
        step_id = step_id or info.get("step_id")
        session_id = session_id or info.get("session_id")
    session_id = session_id or sessions_of(ls).active
    if not session_id:
        raise ValueError("no session: give session_id (or run deepseek.plan first)")
    return agent(ls).explain_routing(session_id, decision_id=decision_id, step_id=step_id)


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_ASK, ask)
    command(server, names.CMD_PLAN, plan)
    command(server, names.CMD_RUN_STEP, run_step)
    command(server, names.CMD_SKIP_STEP, skip_step)
    command(server, names.CMD_REVISE_PLAN, revise_plan)
    command(server, names.CMD_SHOW_PLAN, show_plan)
    command(server, names.CMD_EXPLAIN_ROUTING, explain_routing)
