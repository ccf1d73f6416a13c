"""The operations a driver can ask of a session, shared by the live `Agent` and replay.

Each is recorded first as `AgentRequest@v1 {op, args}`, so replay re-issues the
same requests in the same order; failures become session states the same way
live and in replay (`settle_failure`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from deepseek_ls.agent import intent, refusals
from deepseek_ls.agent.ask_context import ASK_SYSTEM, ask_messages, file_blocks, mentioned_paths
from deepseek_ls.agent.hetun import driver
from deepseek_ls.agent.intent import IntentDecision, TurnFlags
from deepseek_ls.agent.lanes import run_wave
from deepseek_ls.agent.loop import LOOP, StepOutcome, step_outcome
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.runaway import RunawayPaused
from deepseek_ls.agent.runtime import AgentFailure, BudgetExceeded, SessionRuntime
from deepseek_ls.agent.state import BUSY_STATES
from deepseek_ls.agent.steps import current_plan, mark, release_running_step, reopen
from deepseek_ls.policy.approvals import Refused
from deepseek_ls.router import RouterSignals, explain

INTERRUPTED = "resumed after an interruption"
# Sessions whose tools are the read-only set: a plan session, and a review (which is offered none at all).
READ_ONLY_MODES = frozenset({"plan", "review"})

# Requests whose model calls are offered tools: MCP servers are started (and their tools listed,
# `McpToolsListed@v1`) before these run, live and in replay alike.
TOOL_OPS = frozenset({"plan", "run", "run_step", "revise_plan", "decide_mission", "run_plan"})


def record(rt: SessionRuntime, op: str, **args: Any) -> None:
    rt.session.emit("AgentRequest@v1", {"op": op, "args": {k: v for k, v in args.items() if v is not None}})


def new_person_action(rt: SessionRuntime, *approvals: Any) -> None:
    """A request from the person starts: what they refused before may be asked again (live and in
    replay alike, so both ask the same questions)."""
    for each in (*approvals, getattr(rt.world, "approvals", None), getattr(rt.world.tools, "approvals", None)):
        if each is not None and hasattr(each, "new_action"):
            each.new_action()


def settle_failure(rt: SessionRuntime, exc: BaseException) -> None:
    """Turn an exception into a session state.

    Cancel → Paused; a person's "no" that stopped the work (`Refused`) → Paused as
    `refusals.stop` says; a reached cost budget or a model repeating itself (agent/runaway.py)
    → Paused with its message; an LLM error
    (missing key, server down after the retries, ...) → Failed with its message and class,
    resumable once fixed; AgentFailure and anything unexpected → Failed.
    """
    machine = rt.session.machine
    if isinstance(exc, Refused):
        if machine.can("Paused"):
            refusals.stop(rt, exc)
        return
    if isinstance(exc, (asyncio.CancelledError, BudgetExceeded, RunawayPaused)):
        reason = "cancelled" if isinstance(exc, asyncio.CancelledError) else str(exc)
        if machine.state != "Paused" and machine.can("Paused"):
            release_running_step(rt, reason)  # before the transition, which is pushed to the editor
            machine.to("Paused", reason)
        return
    if isinstance(exc, AgentFailure):
        reason, kind, resumable = str(exc), "AgentFailure", False
    elif getattr(exc, "exit_code", None) is not None and getattr(exc, "user_message", None):
        reason, kind, resumable = exc.user_message, type(exc).__name__, True  # type: ignore[attr-defined]
    else:
        reason, kind, resumable = f"{type(exc).__name__}: {exc}", type(exc).__name__, False
    if machine.can("Failed"):
        if resumable:
            release_running_step(rt, reason)  # before the transition, which is pushed to the editor
        machine.to("Failed", reason, error_kind=kind, resumable=resumable)


async def ask(rt: SessionRuntime, prompt: str, context: str | None = None, profile: str | None = None,
              role: str = "ask", *, model: str | None = None, stream: bool | None = None,
              attached: tuple[str, ...] = ()) -> dict[str, Any]:
    """One answer without tools, with the workspace context `ask_context` gathers (repo map,
    index hits, files the question names, the editor's selection); `role` is "ask" (one-shot)
    or "chat" (the REPL); `attached`: files `context` already holds. The session is Completed once answered."""
    decision = rt.router.decide(RouterSignals(prompt=prompt, role=role, override=profile))  # type: ignore[arg-type]
    messages = await ask_messages(
        rt.world, prompt, system=rt.system_prompt(ASK_SYSTEM), editor_context=context,
        max_lines=rt.config.agent_loop.max_context_range_lines, attached=attached,
    )
    rt.session.emit("TurnAdded@v1", {"role": "user", "content": prompt, "agent_role": role})
    completion = await rt.complete(messages, decision, role=role, model=model, stream=stream)
    if rt.session.machine.can("Completed"):
        rt.session.machine.to("Completed", "answered")
    return {
        "session_id": rt.session_id,
        "content": completion.content,
        "reasoning": completion.reasoning_content,
        "profile": decision.profile,
        "model": completion.model or decision.model,
        "decision_id": decision.decision_id,
        "usage": completion.usage.model_dump(mode="json"),
        "finish_reason": completion.finish_reason,
        "timings": {"ttft_ms": completion.ttft_ms, "total_ms": completion.total_ms},
        "retries": completion.retries,
        "cost": rt.session.costs.summary(calls=False),
    }


async def review(rt: SessionRuntime, source: dict[str, Any], diff: str, skipped: list[dict[str, str]],
                 focus: str | None = None, dismissed: Any = ()) -> Any:
    """Review `diff` (agent/review.py) with a world narrowed to its reads; the session is Completed,
    or Failed when a piece's answers were never findings (the findings of the others are kept)."""
    from deepseek_ls.agent.review import Reviewer, ReviewWorld
    from deepseek_ls.agent.review_prompts import SYSTEM as REVIEW_SYSTEM
    from deepseek_ls.agent.review_input import ReviewSource, changes_of

    changes = changes_of(diff, rt.world.root, rt.config, skipped)
    rt.session.emit("TurnAdded@v1", {"role": "user", "agent_role": "reviewer",
                                     "content": f"review {ReviewSource.model_validate(source).describe()}"})
    reviewer = Reviewer(world=ReviewWorld(rt.world), complete=rt.complete, router=rt.router, sink=rt.session,
                        system_prompt=rt.system_prompt(REVIEW_SYSTEM), chunk_tokens=rt.config.review.chunk_tokens,
                        files_in_change=len(changes.files), override=rt.override, latency_mode=rt.latency_mode)
    result = await reviewer.review(changes, source, focus=focus, dismissed=frozenset(dismissed))
    result.session_id = rt.session_id
    result.routing = [explain(d) for d in rt.session.decisions if d.get("role") == "reviewer"]
    if result.failed:
        rt.session.machine.to("Failed", "; ".join(f["error"] for f in result.failed), error_kind="InvalidFindings")
    else:
        rt.session.machine.to("Completed", "reviewed")
    result.cost = rt.session.costs.summary(calls=False)
    return result


async def turn(rt: SessionRuntime, prompt: str, context: str | None, flags: TurnFlags, approvals: Any,
               profile: str | None = None) -> dict[str, Any]:
    """One prompt of a conversation, routed by its intent (`agent/intent.py`): a question is
    answered (role `chat`), a change request planned first and then, unless only planning was
    asked for (or the session is in plan mode), carried out. The files the prompt `@mentions`
    are read through the world and added to `context`. Returns `{intent, answer?, attached}`."""
    decision = await classify_intent(rt, prompt, flags)
    rt.session.emit("IntentClassified@v1", decision.to_json())
    rt.ui.stream("status", intent.describe(decision), session_id=rt.session_id)
    attached = tuple(mentioned_paths(prompt))
    if attached:
        blocks = await file_blocks(rt.world, list(attached), rt.config.agent_loop.max_context_range_lines,
                                   say_missing=True)
        context = "\n\n".join([*([context] if context else []), "Files the person attached:", *blocks])
    out: dict[str, Any] = {"intent": decision.to_json(), "attached": list(attached)}
    if decision.route == "answer":
        out["answer"] = await ask(rt, prompt, context, profile, "chat", attached=attached)
        return out
    await rt.world.prepare_tools()
    await plan(rt, prompt, context)  # Paused "plan ready" (Hetun: the mission card)
    if decision.route == "execute":
        await run(rt, approvals)
    return out


async def classify_intent(rt: SessionRuntime, prompt: str, flags: TurnFlags) -> IntentDecision:
    """The person's flags, else the heuristics when sure, else the fast model's word (role `intent`)."""
    mode = rt.session.mode
    decision = intent.forced(flags, mode)
    if decision is not None:
        return decision
    guess = intent.classify(prompt)
    decision = intent.from_guess(guess, mode)
    if decision is not None:
        return decision
    rt.check_cost_budget()
    completion = await rt.llm.complete(intent.intent_messages(prompt), role="intent", profile="fast", stream=False)
    return intent.from_model(guess, mode, completion.content or "")


def review_finding(rt: SessionRuntime, fingerprint: str, *, with_fix: bool = False) -> dict[str, Any]:
    """A finding of the review session `rt` by fingerprint (`with_fix`: one with a suggested fix);
    `LookupError` when it has none such."""
    if rt.session.mode != "review":
        raise LookupError(f"session {rt.session_id} is not a review")
    for finding in rt.session.review.get("findings", []):
        if finding.get("fingerprint") == fingerprint:
            if with_fix and not finding.get("suggested_fix"):
                raise LookupError(f"the finding at {finding['file']}:{finding['start_line']} has no suggested fix")
            return finding
    raise LookupError(f"review {rt.session_id} has no finding {fingerprint}: run the review again")


async def stage_review_fix(rt: SessionRuntime, fingerprint: str) -> Any:
    """Stage a finding's suggested fix against what the person sees now (buffer, else disk)."""
    finding = review_finding(rt, fingerprint, with_fix=True)
    return await rt.world.stage(finding["suggested_fix"], session_id=rt.session_id, allowed_files=[finding["file"]])


def dismiss_finding(rt: SessionRuntime, fingerprint: str) -> None:
    finding = review_finding(rt, fingerprint)
    rt.session.emit("ReviewFindingDismissed@v1", {"review_id": rt.session.review.get("review_id"),
                                                  "fingerprint": fingerprint, "file": finding["file"]})


async def plan(rt: SessionRuntime, prompt: str, context: str | None = None) -> Plan:
    if rt.session.mode == "hetun":
        return await driver.propose(rt, prompt, context)  # research, plan, mission card; Paused
    result = await LOOP.plan(rt, prompt, context)
    rt.session.machine.to("Paused", "plan ready")
    return result


async def run_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    try:
        return await _run_step(rt, step_id)
    except Refused as exc:  # the person's cancel or silence stopped the step: a defined outcome, not an error
        return _stopped(rt, step_id, exc)


async def _run_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    reopen(rt)
    staged = await run_wave(rt, want=step_id)
    if staged is not None and rt.session.refusal:  # a lane stopped on the person's "no": paused, not run here
        return step_outcome(rt, current_plan(rt).step(step_id), patch_ids=staged, status="paused",
                            message=rt.session.state_reason)
    if staged is not None:
        # Teammate lanes ran the wave this step is in: every merged step is staged for review now.
        step = current_plan(rt).step(step_id)
        if step.status == "running" and rt.session.step_patches(step_id):
            return step_outcome(rt, step, patch_ids=staged, status="staged")
        if step.status == "done":
            return await LOOP.after_step(rt, step)
    outcome = await LOOP.execute_step(rt, step_id, feedback=rt.lane_feedback.pop(step_id, None))
    if outcome.status == "done" and rt.session.state == "ExecutingStep":
        # Nothing to review (NO_CHANGE): move on as if the editor had settled it.
        return await LOOP.after_step(rt, current_plan(rt).step(outcome.step_id))
    return outcome


async def complete_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    reopen(rt)
    try:
        return await LOOP.settle_step(rt, step_id)
    except Refused as exc:  # a question or an approval of the recovery that followed was not answered
        return _stopped(rt, step_id, exc)


def _stopped(rt: SessionRuntime, step_id: str, exc: Refused) -> StepOutcome:
    """The outcome of a step request a refusal stopped: the session paused (`refusals.stop`)."""
    settle_failure(rt, exc)
    plan = current_plan(rt)
    step = next((s for s in plan.steps if s.step_id == step_id), None) or plan.steps[-1]
    return step_outcome(rt, step, status="paused", message=rt.session.state_reason)


async def skip_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    current = current_plan(rt)
    step = current.step(step_id)
    for rec in rt.session.step_patches(step_id):
        if not rec.settled:
            await rt.world.reject(rec.patch_id, None, "step skipped")
    mark(rt, current, step, "skipped", "skipped by the user")
    if rt.session.state != "Paused":
        rt.session.machine.to("Paused", "step skipped")
    return await LOOP.after_step(rt, step)


async def revise_plan(rt: SessionRuntime, feedback: str, step_id: str | None = None) -> Plan:
    reopen(rt)
    result = await LOOP.revise(rt, feedback, step_id)
    rt.session.machine.to("Paused", "plan revised")
    return result


def resume_state(rt: SessionRuntime) -> None:
    """A session killed mid-work is Paused first, so it continues from a legal state."""
    machine = rt.session.machine
    if machine.state in BUSY_STATES:
        release_running_step(rt, INTERRUPTED)
        machine.to("Paused", INTERRUPTED)
    reopen(rt)
    if machine.state == "Failed":
        raise AgentFailure(
            f"session {rt.session_id} failed: {rt.session.last_error}; start a new one or revise its plan"
        )


async def run(rt: SessionRuntime, approvals: Any) -> str:
    resume_state(rt)
    try:
        if rt.session.mode == "hetun":
                return await driver.run(rt, approvals)
        return await LOOP.run_to_end(rt, approvals)
    except (Refused, BudgetExceeded, RunawayPaused) as exc:
        settle_failure(rt, exc)  # Paused: the refusal, the budget's or the runaway guard's message as its reason
        return rt.session.state


async def decide_mission(rt: SessionRuntime, decision: str, text: str | None, approvals: Any) -> str:
    """The person's decision on a Hetun mission (approve: the run goes straight through)."""
    reopen(rt)
    try:
        return await driver.decide(rt, decision, text, approvals)
    except (Refused, BudgetExceeded, RunawayPaused) as exc:
        settle_failure(rt, exc)
        return rt.session.state


async def run_plan(rt: SessionRuntime, plan: Plan, approvals: Any) -> str:
    """Carry out a plan made elsewhere (a teammate lane's step from its orchestrator) to the end."""
    rt.session.machine.to("Planning", "plan from the orchestrator")
    rt.session.emit("PlanCreated@v1", {"plan": plan.to_json()})
    return await run(rt, approvals)


def cancel(rt: SessionRuntime) -> bool:
    if rt.session.machine.terminal or rt.session.state in ("Paused", "Idle"):
        return False
    release_running_step(rt, "cancelled by the user")
    rt.session.machine.to("Paused", "cancelled by the user")
    return True
