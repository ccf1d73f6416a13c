"""Work from a comment, or from a selection: `deepseek.edit`, and the code action that carries it.

A line that is only a comment (in the document's comment syntax, `index/comment_syntax.py`) whose
text starts with `deepseek:` gets the code action "DeepSeek: <instruction>" (a command, not an
edit: `deepseek.edit {uri, line, instruction, version}`). The editors' "Edit selection with
DeepSeek…" sends the same command with the selection's `range` and what the person typed.

`deepseek.edit` runs the agent as `deepseek.plan` then `deepseek.runStep` do, scoped to the one
file: it plans (the prompt names the file, and for a comment asks that the change remove it),
asks the person whether to run that plan (`plan.execute`, decided like every approval: the
policy's mode, "Allow once" / "Always allow" / "Deny", `deepseek.approve` / `deepseek.deny`),
and runs its first step, which ends in pending hunks (the usual Accept / Reject lenses and code
actions); later steps wait on the plan's lenses. A "no" of any kind runs nothing and leaves the
plan. A comment that changed or went since the action was offered is refused, never acted on.
`[code_actions] comment_instructions` shows or hides the code action.
"""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import code_actions, commands, names, params
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent
from deepseek_ls.lsp.uris import current_text, open_document, uri_to_relpath

_INSTRUCTION = re.compile(r"deepseek\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)
MAX_SCANNED_LINES = 500  # a whole-file range (select all) is read this far, no more
MAX_ACTIONS = 20
TITLE_CHARS = 80
CONTEXT_LINES = 60  # the lines around a comment sent with it (the executor reads more with its tools)


class RunApprovals:
    """The connection's answers to "run this plan?", so an "Always allow" holds until the settings change."""

    def __init__(self) -> None:
        self.approvals: Any = None
        self.policy: Any = None


class StaleInstruction(ValueError):
    """The comment the command was made from is not in the document any more (as it was)."""


def instruction_of(line: str, language_id: str | None, path: str) -> str | None:
    """The instruction of a line that is only a comment starting with `deepseek:`, else None
    (also None for an empty instruction)."""
    from deepseek_ls.index.comment_syntax import comment_text, syntax_for

    text = comment_text(line, syntax_for(language_id, path))
    found = _INSTRUCTION.fullmatch(text) if text else None
    instruction = " ".join(found.group(1).split()) if found else ""
    return instruction or None


def _language_id(ls: DeepSeekServer, uri: str) -> str | None:
    doc = open_document(ls, uri)
    return getattr(doc, "language_id", None) if doc is not None else None


def _title(instruction: str) -> str:
    short = instruction if len(instruction) <= TITLE_CHARS else instruction[: TITLE_CHARS - 1].rstrip() + "…"
    return f"DeepSeek: {short}"


def actions(ls: DeepSeekServer, p: types.CodeActionParams) -> list[types.CodeAction]:
    """"DeepSeek: <instruction>" for each `deepseek:` comment line the range touches."""
    if not ls.config.code_actions.comment_instructions:
        return []
    uri = p.text_document.uri
    text, version = current_text(ls, uri)
    lines = text.split("\n")
    first = min(p.range.start.line, len(lines))
    last = min(p.range.end.line, len(lines) - 1, first + MAX_SCANNED_LINES)
    language_id, path = _language_id(ls, uri), uri.rpartition("/")[2]
    out: list[types.CodeAction] = []
    for line in range(first, last + 1):
        instruction = instruction_of(lines[line], language_id, path)
        if instruction is None:
            continue
        args: dict[str, Any] = {"uri": uri, "line": line, "instruction": instruction}
        if version is not None:
            args["version"] = version
        title = _title(instruction)
        out.append(types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                                    command=types.Command(title=title, command=names.CMD_EDIT, arguments=[args])))
        if len(out) == MAX_ACTIONS:
            break
    return out


def _check_comment(ls: DeepSeekServer, a: Any, rel: str) -> None:
    """Refuse unless line `a.line` still is a `deepseek:` comment saying `a.instruction`. An edit
    elsewhere in the buffer (a newer version, the comment unchanged) is no reason to refuse."""
    text, version = current_text(ls, a.uri)
    lines = text.split("\n")
    now = instruction_of(lines[a.line], _language_id(ls, a.uri), rel) if a.line < len(lines) else None
    if now == " ".join(a.instruction.split()):
        return
    where = f"line {a.line + 1} of {rel}"
    said = f"it now says “{now}”" if now else "there is no `deepseek:` comment there now"
    if a.version is not None and version is not None and version != a.version:
        raise StaleInstruction(
            f"the `deepseek:` comment on {where} changed since the action was offered (document version "
            f"{a.version}, now {version}): {said}. Nothing was run; ask for code actions on the comment again.")
    raise StaleInstruction(f"{where} is not a `deepseek:` comment saying “{a.instruction}” ({said}). Nothing was run.")


def _prompt(a: Any, rel: str, lines: list[str]) -> str:
    if a.line is not None:
        return (f"{a.instruction}\n\nThis request is the `deepseek:` comment on line {a.line + 1} of {rel}:\n"
                f"    {lines[a.line].strip()}\nChange only {rel}. The change must also delete that comment line: "
                "it is the request, not code to keep.")
    if a.range is not None:
        start, end = a.range.start.line + 1, max(a.range.end.line, a.range.start.line) + 1
        return f"{a.instruction}\n\nApply this to lines {start}-{end} of {rel} (the selection); change only {rel}."
    return f"{a.instruction}\n\nChange only {rel}."


def _context_range(a: Any, line_count: int) -> dict[str, Any] | None:
    if a.line is not None:
        first = max(0, a.line - CONTEXT_LINES // 2)
        last = min(max(line_count - 1, 0), first + CONTEXT_LINES)
        return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}
    return a.range.model_dump() if a.range is not None else None


def _mode(ls: DeepSeekServer) -> str:
    # A one-file instruction is a plain session: never a Hetun research mission.
    mode = ls.config.agent_loop.mode
    return "agent" if mode == "hetun" else mode


async def _may_run(ls: DeepSeekServer, session_id: str, plan: dict[str, Any], instruction: str, rel: str) -> Any:
    """The person's (or the policy's) answer to running the plan."""
    from deepseek_ls.policy.approvals import Approvals
    from deepseek_ls.ui_port import ApprovalRequest

    if ls.ui is None:
        raise RuntimeError("the server is not initialized")
    steps = plan.get("steps", [])
    files = sorted({f for s in steps for f in s.get("files", [])} | {rel})
    detail = "\n".join(f"{i}. {s.get('title', '')} ({', '.join(s.get('files', [])) or rel})"
                       for i, s in enumerate(steps, 1))
    beyond = [f for f in files if f != rel]
    if beyond:
        detail += f"\nThe plan also changes {', '.join(beyond)}, not only {rel}."
    request = ApprovalRequest(
        request_id=f"edit-{session_id}", kind="plan.execute", title=f"Run DeepSeek's plan for: {instruction}",
        detail=detail, files=files, session_id=session_id)
    state = ls.feature_state(RunApprovals)
    if state.approvals is None or state.policy is not ls.config.policy:
        # The agent's port, not the bare LSP one: it tells the editor the question waits
        # (`deepseek/attention`: the badge and the notification) and fires the Notification hook.
        state.approvals, state.policy = Approvals(ls.config.policy, agent(ls).ui), ls.config.policy
    state.approvals.new_action()  # a new request of the person's: a "no" to an earlier one is not this answer
    return await state.approvals.request(request)


async def edit(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.EditArgs, args)
    instruction = " ".join(a.instruction.split())
    if not instruction:
        raise ValueError("the instruction is empty: say what to change")
    if ls.root is None:
        raise ValueError("no workspace folder is open: DeepSeek edits files of the open workspace")
    rel = uri_to_relpath(ls.root, a.uri)
    if rel is None:
        raise ValueError(f"{a.uri} is not a file of the open workspace: DeepSeek edits the workspace's files only")
    if a.line is not None:
        _check_comment(ls, a, rel)
    text, _ = current_text(ls, a.uri)
    lines = text.split("\n")
    out = await plan_and_run(ls, prompt=_prompt(a.model_copy(update={"instruction": instruction}), rel, lines),
                             uri=a.uri, rel=rel, context_range=_context_range(a, len(lines)), what=instruction)
    return {**out, "instruction": instruction}


async def plan_and_run(ls: DeepSeekServer, *, prompt: str, uri: str, rel: str, context_range: dict[str, Any] | None,
                       what: str) -> dict[str, Any]:
    """Plan `prompt` on file `rel` (the lines `context_range` of `uri` as context), ask whether to run the
    plan ("Run DeepSeek's plan for: <what>") and run its first step: `{session_id, plan, ran, answer?,
    step?}`. Also the "DeepSeek: Fix …" of a diagnostic (lsp/diagnostic_actions.py)."""
    from deepseek_ls.policy.approvals import said

    mode = _mode(ls)
    planned = await commands.plan(ls, {"prompt": prompt, "uri": uri, "range": context_range, "mode": mode})
    session_id, plan = planned["session_id"], planned["plan"]
    out: dict[str, Any] = {"session_id": session_id, "plan": plan, "ran": False}
    steps = [s for s in plan.get("steps", []) if s.get("status", "pending") == "pending"]
    if not steps:
        ls.show_message(f"deepseek-ls: nothing to change for “{what}”: {plan.get('goal', '')}")
        return out
    if mode == "plan":
        ls.show_message("deepseek-ls: the plan is ready (plan mode runs nothing); its ▶ lenses run the steps.")
        return out
    decision = await _may_run(ls, session_id, plan, what, rel)
    out["answer"] = decision.answer
    if not decision.allowed:
        ls.show_message(f"deepseek-ls: the plan for “{what}” was not run ({said(decision.answer, decision.reason)}); "
                        "it stays in the session: its ▶ lenses run its steps when you want.")
        return out
    out["ran"] = True
    out["step"] = await commands.run_step(ls, {"session_id": session_id, "step_id": steps[0]["step_id"]})
    if len(steps) > 1:
        ls.show_message(f"deepseek-ls: {len(steps) - 1} more step(s) of this plan: run them from its ▶ lenses "
                        "once you have accepted or rejected these changes.")
    return out


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    code_actions.add_provider(server, actions)
    command(server, names.CMD_EDIT, edit)
