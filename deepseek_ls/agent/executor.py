"""The executor: one plan step → staged patches (docs/agent.md, "The loop").

The model sees the exact current content of the step's declared files and
answers with a unified diff (fenced, bare, or through the `patch.stage` tool),
with bounded `NEED_CONTEXT|path[:start-end]` round trips, `NEED_FILE|` (scope
growth: the plan must be revised) or `NO_CHANGE|`. Diffs that touch files the
step does not declare are refused before staging. Nothing is applied here.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from typing import Any, Literal

from deepseek_ls.agent import executor_prompts as prompts
from deepseek_ls.agent.executor_parse import ExecutorAnswer, ExecutorParseError, parse_executor_answer
from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.runtime import MAX_TOOL_ROUNDS, SessionRuntime
from deepseek_ls.patch import PatchError
from deepseek_ls.patch import editblock_prompts as edit_formats
from deepseek_ls.patch.editblock import EDIT_TOOL, blocks_from_edit_calls, edit_blocks_to_diff, edit_tool_schema, render_blocks
from deepseek_ls.patch.parse import ParsedFile, format_diff, parse_diff, resend_failed
from deepseek_ls.patch.wholefile import whole_file_blocks, whole_file_diff
from deepseek_ls.policy import PolicyViolation
from deepseek_ls.router import RouterDecision, RouterSignals

STAGE_TOOL = "patch_stage"


@dataclass
class StepResult:
    kind: Literal["patches", "no_change", "need_file", "missing_path", "patch_mismatch"]
    patch_ids: list[str] = field(default_factory=list)
    need_files: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""
    decision: RouterDecision | None = None
    classified: bool = False  # the failure was already recorded as FailureClassified


class Executor:
    async def execute(self, rt: SessionRuntime, plan: Plan, step: Step, *, feedback: str | None = None) -> StepResult:
        world, loop_cfg, session = rt.world, rt.config.agent_loop, rt.session
        files = step.files[: loop_cfg.max_files_per_iteration]
        repo_map = await world.repo_map(None)
        contents = {f: await world.read_file(f) for f in files}
        decision = rt.router.decide(
            RouterSignals(
                prompt=f"{step.title}\n{feedback or ''}",
                role="executor",
                files_touched=max(len(files), session.files_touched()),
                failure_streak=session.failure_streak,
                verification_failures=session.verification_failures,
                failure_class=session.last_failure_class if feedback else None,
                latency_mode=rt.latency_mode,  # type: ignore[arg-type]
                override=rt.override,  # type: ignore[arg-type]
            ),
            unit=f"executor:{step.step_id}",
        )
        entry = rt.config.models.get(decision.model)  # the registry entry may prefer an edit format
        edit_format = loop_cfg.edit_format_by_model.get(
            decision.model, (entry.edit_format if entry else None) or loop_cfg.edit_format)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": rt.system_prompt(prompts.system(edit_format), skills=True)},
            # `_fit`: what gives way first when the prompt is over the model's window (llm/fit.py).
            {"role": "user", "content": prompts.REPO_MAP.format(repo_map=repo_map or "(empty)"),
             "_fit": {"priority": 10, "label": "the repo map"}},
            {"role": "user", "content": prompts.plan_message(plan.to_json()), "_fit": {"priority": 50, "label": "the plan"}},
            {"role": "user", "content": prompts.files_message(contents), "_fit": {"priority": 40, "label": "file texts"}},
            {"role": "user", "content": prompts.step_message(step.model_dump(), feedback)},
        ]
        tools = [*world.tool_schemas(read_only=True), *world.mcp_action_schemas(), *_stage_schema(world)]
        if edit_format == "editblock":
            tools.append(edit_tool_schema())  # the same edit as a function call (Claude Code's Edit)
        world.allow_files(step.files)
        retries = 0
        escalated = False
        context_rounds = 0
        tool_rounds = 0
        questions = 0
        diff_failures = 0
        resend: tuple[list[ParsedFile], list[tuple[str, int]]] | None = None
        while True:
            completion = await rt.complete(messages, decision, role="executor", tools=tools)
            completion, edit_error = _edit_calls_as_blocks(completion, contents)
            staged = [c for c in completion.tool_calls if c.function.name == STAGE_TOOL]
            if completion.tool_calls and tool_rounds < MAX_TOOL_ROUNDS:
                tool_rounds += 1
                await rt.run_tool_calls(completion, messages, tools)
                ids = _staged_ids(messages, len(completion.tool_calls)) if staged else []
                if ids:
                    return StepResult("patches", patch_ids=ids, decision=decision)
                continue
            text = completion.content or ""
            classified = False
            try:
                if edit_error:
                    raise ExecutorParseError(edit_error)
                answer = parse_executor_answer(text)
            except ExecutorParseError as exc:
                problem = str(exc)
                answer = None if edit_error else _whole_file_answer(text, contents, loop_cfg.whole_file_max_lines)
            if answer is not None:
                if answer.kind == "no_change":
                    return StepResult("no_change", reason=answer.reason, decision=decision)
                if answer.kind == "need_file":
                    return StepResult("need_file", need_files=answer.need_files, decision=decision)
                if answer.kind == "ask_user" and questions < loop_cfg.max_ask_user_cycles:
                    questions += 1
                    reply = await rt.ask_user(answer.reason, "ExecutingStep")
                    messages += [{"role": "assistant", "content": text},
                                 {"role": "user", "content": f"The user answered: {reply}"}]
                    continue
                if answer.kind == "need_context" and context_rounds < loop_cfg.max_context_requests_per_iteration:
                    context_rounds += 1
                    blocks = [await self._context(rt, r.path, r.start, r.end) for r in answer.context]
                    messages += [{"role": "assistant", "content": text},
                                 {"role": "user", "content": prompts.context_message(blocks)}]
                    continue
                if answer.kind == "edit_blocks":
                    try:
                        # A file outside the step is assumed to exist: the scope check below catches it.
                        answer.diff = edit_blocks_to_diff(
                            answer.edit_blocks, lambda p: contents[p] is not None if p in contents else True)
                        answer.kind = "diff"
                    except PatchError as exc:
                        answer.kind, problem = "invalid", str(exc)
                if answer.kind == "diff":
                    outside = _outside_files(answer.diff, step.files)
                    if outside:
                        return StepResult(
                            "need_file",
                            need_files=[(f, "the executor's diff edits it") for f in outside],
                            decision=decision,
                        )
                    if resend is not None:  # the model resent only the hunks that failed: put them back in place
                        answer.diff = _with_resent(resend, answer.diff)
                    resend = None
                    try:
                        ps = await world.stage(answer.diff, session_id=rt.session_id, allowed_files=step.files)
                        return StepResult("patches", patch_ids=[ps.patch_id], decision=decision)
                    except PatchError as exc:
                        if exc.missing_paths:  # a wrong path: the planner must fix the step, not the executor
                            return StepResult("missing_path", need_files=[(p, str(exc)) for p in exc.missing_paths],
                                              reason=str(exc), decision=decision)
                        resend = _partial_failure(answer.diff, exc)
                        if resend is not None:
                            problem = prompts.resend_message(exc)
                            rt.classifier.patch_mismatch(f"the diff could not be staged: {exc}")
                        else:
                            problem = rt.classifier.patch_mismatch(f"the diff could not be staged: {exc}").detail
                        classified = True
                        rt.check_failure_budget()
                        diff_failures += 1
                elif answer.kind != "invalid":
                    problem = f"{answer.kind} is not allowed any more in this step"
            reask = prompts.reask_message(problem)
            if edit_format == "udiff" and diff_failures >= loop_cfg.edit_format_fallback_after:
                # Unified diffs keep failing: ask for SEARCH/REPLACE blocks (placed by their text alone).
                edit_format = "editblock"
                reask += "\n\n" + edit_formats.fallback_message(diff_failures)
                rt.ui.stream("status", f"executor: unified diffs failed {diff_failures} times; "
                                       "asking for SEARCH/REPLACE blocks instead", session_id=rt.session_id)
            messages += [{"role": "assistant", "content": text}, {"role": "user", "content": reask}]
            retries += 1
            if retries > loop_cfg.editor_parse_retries:
                up = None if escalated else rt.router.escalate(decision, "EXECUTOR_INVALID_OUTPUT")
                if up is None:
                    return StepResult("patch_mismatch", reason=problem, decision=decision, classified=classified)
                decision, escalated, retries = up, True, 0

    async def _context(self, rt: SessionRuntime, path: str, start: int | None, end: int | None) -> str:
        try:
            text = await rt.world.read_file(path)
        except PolicyViolation as exc:
            return f"{path}: refused ({exc})"
        if text is None:
            return f"{path}: (does not exist)"
        lines = text.splitlines()
        limit = rt.config.agent_loop.max_context_range_lines
        lo = max(1, start or 1)
        hi = min(len(lines), end or len(lines), lo + limit - 1)
        body = "\n".join(lines[lo - 1 : hi])
        return f"{path} lines {lo}-{hi}:\n```\n{body}\n```"


def _edit_calls_as_blocks(completion, contents: dict[str, str | None]):
    """`edit_file` tool calls become the SEARCH/REPLACE text of the answer, read like any other
    (the transcript then shows the calls as that text); a call that cannot be used gives the error."""
    calls = [c for c in completion.tool_calls if c.function.name == EDIT_TOOL]
    if not calls:
        return completion, None
    error = None
    try:
        text = render_blocks(blocks_from_edit_calls([c.function.arguments for c in calls], contents))
    except PatchError as exc:
        error = f"the {EDIT_TOOL} calls could not be used: {exc}"
        text = "\n".join(f"{EDIT_TOOL}({c.function.arguments})" for c in calls)
    return completion.model_copy(update={"content": text, "tool_calls": []}), error


def _partial_failure(diff: str, exc: PatchError) -> tuple[list[ParsedFile], list[tuple[str, int]]] | None:
    """When some hunks of `diff` were placed and others not: the parsed diff and the failed hunks."""
    if not exc.failed_hunks or exc.missing_paths:
        return None
    try:
        parsed = parse_diff(diff)
    except PatchError:
        return None
    total = sum(len(f.hunks) for f in parsed)
    return (parsed, exc.failed_hunks) if 0 < len(exc.failed_hunks) < total else None


def _with_resent(resend: tuple[list[ParsedFile], list[tuple[str, int]]], diff: str) -> str:
    try:
        return format_diff(resend_failed(resend[0], resend[1], parse_diff(diff)))
    except PatchError:
        return diff  # staging reports the problem of the new answer itself


def _whole_file_answer(text: str, contents: dict[str, str | None], max_lines: int) -> ExecutorAnswer | None:
    """An answer that is the whole new content of step files (small models do this) as a diff."""
    diffs = []
    for path, new in whole_file_blocks(text, contents).items():
        diff = whole_file_diff(path, contents.get(path), new, max_lines=max_lines)
        if diff:
            diffs.append(diff)
    return ExecutorAnswer("diff", diff="".join(diffs)) if diffs else None


def _stage_schema(world) -> list[dict[str, Any]]:
    return [s for s in world.tool_schemas(read_only=False) if s.get("function", {}).get("name") == STAGE_TOOL]


def _staged_ids(messages: list[dict[str, Any]], n: int) -> list[str]:
    ids = []
    for msg in messages[-n:]:
        try:
            value = json.loads(msg.get("content") or "{}")
        except ValueError:
            continue
        patch_id = (value.get("value") or {}).get("patch_id") if isinstance(value, dict) and value.get("ok") else None
        if patch_id:
            ids.append(patch_id)
    return ids


def _outside_files(diff: str, declared: list[str]) -> list[str]:
    try:
        parsed = parse_diff(diff)
    except Exception:  # noqa: BLE001 - staging reports the parse error in full
        return []
    allowed = {posixpath.normpath(p) for p in declared}
    touched = []
    for f in parsed:
        for p in (f.new_path, f.old_path):
            if p and posixpath.normpath(p) not in allowed and p not in touched:
                touched.append(p)
    return touched
