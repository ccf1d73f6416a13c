"""A session's plan steps as the loop moves them: the current plan, a step marked, a stopped step
released, a failed session reopened.

Below the loop, the operations, the refusals and the Hetun driver, which all move steps: a
refusal that stops a running step releases it here without importing the loop that raised it.
"""

from __future__ import annotations

from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.runtime import AgentFailure, SessionRuntime


def current_plan(rt: SessionRuntime) -> Plan:
    """The session's plan; an `AgentFailure` when it has none yet."""
    if rt.session.plan is None:
        raise AgentFailure("the session has no plan yet")
    return rt.session.plan


def mark(rt: SessionRuntime, plan: Plan, step: Step, status: str, reason: str = "") -> None:
    """Record `step`'s new status (`StepMarked@v1`)."""
    rt.session.emit(
        "StepMarked@v1", {"plan_id": plan.plan_id, "step_id": step.step_id, "status": status, "reason": reason}
    )


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
    mark(rt, plan, step, "pending", f"stopped: {reason}")


def reopen(rt: SessionRuntime) -> None:
    """A session that failed on something that may pass (an LLM error) continues from Paused."""
    session = rt.session
    if session.state == "Failed" and session.resumable:
        session.machine.to("Paused", f"resumed after: {session.last_error}")
