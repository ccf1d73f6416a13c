"""The operations a driver can ask of a session, shared by the live `Agent` and replay.

Each is recorded first as `AgentRequest@v1 {op, args}`, so replay re-issues the
same requests in the same order; failures become session states the same way
live and in replay (`settle_failure`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from deepseek_ls.agent.loop import AgentLoop, StepOutcome
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.runtime import AgentFailure, SessionCancelled, SessionRuntime
from deepseek_ls.router import RouterSignals

ASK_SYSTEM = (
    "You are deepseek-ls, a coding assistant inside the user's editor. Answer the question "
    "about their code concisely; do not propose edits unless asked."
)
INTERRUPTED = "resumed after an interruption"
LIVE_STATES = ("Planning", "ExecutingStep", "AwaitingApproval", "AwaitingUserInput", "Verifying")

loop = AgentLoop()


# Requests whose model calls are offered tools: MCP servers are started (and their tools listed,
# `McpToolsListed@v1`) before these run, live and in replay alike.
TOOL_OPS = frozenset({"plan", "run", "run_step", "revise_plan"})


def record(rt: SessionRuntime, op: str, **args: Any) -> None:
    rt.session.emit("AgentRequest@v1", {"op": op, "args": {k: v for k, v in args.items() if v is not None}})


def settle_failure(rt: SessionRuntime, exc: BaseException) -> None:
    """Turn an exception into a session state: AgentFailure → Failed, LLM errors/cancel → Paused (resumable)."""
    machine = rt.session.machine
    if isinstance(exc, SessionCancelled):
        return
    if isinstance(exc, asyncio.CancelledError):
        reason = "cancelled"
    elif isinstance(exc, AgentFailure):
        if machine.can("Failed"):
            machine.to("Failed", str(exc))
        return
    elif getattr(exc, "exit_code", None) is not None and getattr(exc, "user_message", None):
        reason = exc.user_message  # type: ignore[attr-defined]
    else:
        if machine.can("Failed"):
            machine.to("Failed", f"{type(exc).__name__}: {exc}")
        return
    if machine.can("Paused"):
        release_running_step(rt, reason)  # before the transition, which is pushed to the editor
        machine.to("Paused", reason)


def release_running_step(rt: SessionRuntime, reason: str) -> None:
    """A step stopped while running (cancelled, an LLM error, a kill) goes back to
    `pending`, so it can be run again. A step whose patches are staged stays
    `running`: its hunks still wait for accept/reject."""
    session = rt.session
    plan, step_id = session.plan, session.current_step_id
    if plan is None or step_id is None:
        return
    step = next((s for s in plan.steps if s.step_id == step_id), None)
    if step is None or step.status != "running":
        return
    if any(not rec.settled for rec in session.step_patches(step_id)):
        return
    loop._mark(rt, plan, step, "pending", f"stopped: {reason}")


async def ask(rt: SessionRuntime, prompt: str, context: str | None = None, profile: str | None = None,
              role: str = "ask") -> dict[str, Any]:
    """One answer without tools; `role` is "ask" (one-shot) or "chat" (the REPL)."""
    decision = rt.router.decide(RouterSignals(prompt=prompt, role=role, override=profile))  # type: ignore[arg-type]
    messages = [{"role": "system", "content": ASK_SYSTEM}]
    if context:
        messages.append({"role": "user", "content": f"Editor context:\n{context}",
                         "_fit": {"priority": 20, "label": "the editor context"}})
    messages.append({"role": "user", "content": prompt})
    rt.session.emit("TurnAdded@v1", {"role": "user", "content": prompt, "agent_role": role})
    completion = await rt.complete(messages, decision, role=role)
    return {
        "session_id": rt.session_id,
        "content": completion.content,
        "reasoning": completion.reasoning_content,
        "profile": decision.profile,
        "model": completion.model or decision.model,
        "decision_id": decision.decision_id,
    }


async def plan(rt: SessionRuntime, prompt: str, context: str | None = None) -> Plan:
    result = await loop.plan(rt, prompt, context)
    rt.session.machine.to("Paused", "plan ready")
    return result


async def run_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    outcome = await loop.execute_step(rt, step_id)
    if outcome.status == "done" and rt.session.state == "ExecutingStep":
        # Nothing to review (NO_CHANGE): move on as if the editor had settled it.
        return await loop.after_step(rt, loop._plan(rt).step(outcome.step_id))
    return outcome


async def complete_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    return await loop.settle_step(rt, step_id)


async def skip_step(rt: SessionRuntime, step_id: str) -> StepOutcome:
    current = loop._plan(rt)
    step = current.step(step_id)
    for rec in rt.session.step_patches(step_id):
        if not rec.settled:
            await rt.world.reject(rec.patch_id, None, "step skipped")
    loop._mark(rt, current, step, "skipped", "skipped by the user")
    if rt.session.state != "Paused":
        rt.session.machine.to("Paused", "step skipped")
    return await loop.after_step(rt, step)


async def revise_plan(rt: SessionRuntime, feedback: str, step_id: str | None = None) -> Plan:
    result = await loop.revise(rt, feedback, step_id)
    rt.session.machine.to("Paused", "plan revised")
    return result


def resume_state(rt: SessionRuntime) -> None:
    """A session killed mid-work is Paused first, so it continues from a legal state."""
    machine = rt.session.machine
    if machine.state in LIVE_STATES:
        release_running_step(rt, INTERRUPTED)
        machine.to("Paused", INTERRUPTED)
    if machine.state == "Failed":
        raise AgentFailure(
            f"session {rt.session_id} failed: {rt.session.last_error}; start a new one or revise its plan"
        )


async def run(rt: SessionRuntime, approvals: Any) -> str:
    resume_state(rt)
    try:
        return await loop.run_to_end(rt, approvals)
    except SessionCancelled:
        return rt.session.state


def cancel(rt: SessionRuntime) -> bool:
    if rt.session.machine.terminal or rt.session.state in ("Paused", "Idle"):
        return False
    release_running_step(rt, "cancelled by the user")
    rt.session.machine.to("Paused", "cancelled by the user")
    return True
