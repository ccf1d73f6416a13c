"""What a "no" means: the one place that decides where a refused approval or question leaves a session.

Every approval point reports a refusal the same way (`policy.approvals.Refused`: the kind of
approval, the answer — `deny`, `cancel` or `timeout` —, what was asked about), whichever front
end asked the person. This module turns it into the session's next state:

| kind | deny | cancel, timeout |
|---|---|---|
| `patch.apply`, `scope.grow` | the hunks are rejected, the step failed | nothing recorded on the patch: it stays staged, the step running |
| `bash.run` (verification) | the command is not run | the same |
| `mcp.call` | (the model is told and goes on without it: not a stop) | the step goes back to pending |
| `ask_user` | — | the step (if one ran) goes back to pending |
| `mission` | (reject: `hetun.driver.decide`) | the mission card still waits |
| `lane` | a teammate lane stopped on a refusal: its step is left pending, not run again here | the same |

In every case the session is `Paused` with a reason that names what was refused, how, and what the
person can do next; the transition carries `refusal: {kind, answer, subject}` (the session view's
`refusal`). Nothing is asked again until the person acts again: a refused request put again in
the same action gets the same answer without a prompt (`Approvals`), and `AgentLoop.run_to_end`
returns once the session is paused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepseek_ls.agent.steps import release_running_step
from deepseek_ls.policy.approvals import Refused, said

if TYPE_CHECKING:
    from deepseek_ls.agent.plan import Step
    from deepseek_ls.agent.runtime import SessionRuntime

__all__ = ["Refused", "refuse_change", "stop"]

_NEXT = {
    "patch.apply": "it is still staged: run the session again to be asked again, or apply or reject it yourself",
    "scope.grow": "it is still staged: run the session again to be asked again, or apply or reject it yourself",
    "bash.run": "approve it (run the session again to be asked again), change the plan's verification, or run it "
                "yourself",
    "mcp.call": "the step stopped: run it again to be asked again, or skip it",
    "ask_user": "run the session again to be asked again",
    "mission": "the mission still waits: approve, reject or modify it",
}


def stop(rt: SessionRuntime, refused: Refused) -> str:
    """Pause the session for `refused` (see the table above); returns the reason it was given."""
    session = rt.session
    if refused.kind in ("mcp.call", "ask_user"):
        release_running_step(rt, f"stopped: {refused.subject}: {said(refused.answer, refused.reason)}")
    reason = _reason(refused)
    session.machine.to("Paused", reason, refusal={"kind": refused.kind, "answer": refused.answer,
                                                  "subject": refused.subject[:300], "reason": refused.reason[:300]})
    return reason


async def refuse_change(rt: SessionRuntime, step: Step, refused: Refused) -> str:
    """A staged change the person did not approve: a deny rejects its hunks and fails the step (the
    person decided about the change); a cancel or no answer leaves it staged. Then `stop`."""
    if refused.answer == "deny" and refused.patch_id:
        await rt.world.reject(refused.patch_id, None, "denied by the user")
        plan = rt.session.plan
        if plan is not None:
            rt.session.emit("StepMarked@v1", {"plan_id": plan.plan_id, "step_id": step.step_id, "status": "failed",
                                              "reason": "the change was denied"})
    return stop(rt, refused)


def _reason(refused: Refused) -> str:
    how = said(refused.answer, refused.reason)
    if refused.kind in ("patch.apply", "scope.grow"):
        if refused.answer == "deny":
            return f"the change was denied ({refused.subject}); revise the plan or skip the step"
        return f"approving the change to {refused.subject}: {how}; {_NEXT[refused.kind]}"
    if refused.kind == "bash.run":
        return f"verification command {refused.subject!r} was not run ({how}); {_NEXT['bash.run']}"
    if refused.kind == "lane":
        return f"{refused.subject} ({how}); its step was not run here: run the session again to run it, or skip it"
    return f"{refused.subject}: {how}; {_NEXT.get(refused.kind, 'run the session again')}"
