"""The Hetun flow: research → plan → mission card → the person decides → the run goes straight through.

Task-level approval is part of the mode, not of the approval policy: the mission
is always put to the person (`decide`, or a question in the CLI), whatever
`policy.approval_mode` says. Once approved, patches inside the mission's files
are applied without per-hunk prompts (`MissionApprovals`), after one checkpoint
of all the mission's files; a patch outside them (the scope grew) stops and
asks explicitly. Verification and recovery are the loop's own.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.agent import refusals
from deepseek_ls.agent.hetun import mission as missions
from deepseek_ls.agent.hetun.research import Researcher
from deepseek_ls.agent.loop import LOOP
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.runtime import AgentFailure, SessionRuntime
from deepseek_ls.agent.steps import reopen
from deepseek_ls.policy.approvals import Refused, ask_question
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

DECISIONS = ("approve", "reject", "modify")
QUESTION_SUFFIX = "\nApprove this mission? Answer approve, reject or modify."
_ANSWERS = {"a": "approve", "approve": "approve", "y": "approve", "yes": "approve",
            "r": "reject", "reject": "reject", "n": "reject", "no": "reject",
            "m": "modify", "modify": "modify"}


class MissionNotApproved(ValueError):
    """A Hetun session's steps run only after its mission is approved."""


def pending_mission(rt: SessionRuntime) -> dict[str, Any] | None:
    h = rt.session.hetun
    return h.get("mission") if h.get("mission") and h.get("decision") != "approve" else None


def require_approved(session: Any) -> None:
    h = getattr(session, "hetun", {}) or {}
    if session.mode == "hetun" and h.get("decision") != "approve":
        raise MissionNotApproved("this is a Hetun session: approve its mission first (Approve mission in the "
                                 "mission document, or `deepseek-ls run --session ID`)")


async def propose(rt: SessionRuntime, prompt: str, context: str | None = None) -> Plan:
    """Research, plan, and put the mission card up; the session then waits (Paused) for the decision."""
    machine = rt.session.machine
    if machine.state != "Planning":
        machine.to("Planning", "hetun: researching the request")
    research = await Researcher(rt, rt.config.hetun).run(prompt)
    notes = f"Hetun research (findings of sub-agents; check them before relying on them):\n{research.synthesis}"
    plan = await LOOP.plan(rt, prompt, context=f"{notes}\n\n{context}" if context else notes)
    card = missions.build(plan, rt.session.hetun.get("research") or {}, rt.config)
    rt.session.emit("MissionProposed@v1", {"mission": card})
    machine.to("Paused", "mission ready: approve, reject or modify it")
    return plan


async def decide(rt: SessionRuntime, decision: str, text: str | None, approvals: Any) -> str:
    """Apply the person's decision on the pending mission; returns the session state."""
    if decision not in DECISIONS:
        raise AgentFailure(f"unknown mission decision {decision!r}; one of {', '.join(DECISIONS)}")
    session = rt.session
    card = pending_mission(rt)
    if card is None:
        if session.hetun.get("decision") == "approve" and decision == "approve":
            reopen(rt)
            return await execute(rt, approvals)  # resume an approved mission
        raise MissionNotApproved("there is no mission waiting for a decision in this session")
    if decision == "modify":
        text = (text or "").strip()
        if not text or text == card["text"].strip():
            raise MissionNotApproved("Modify needs the changed mission text (edit it under '## Mission', then Modify…)")
    session.emit("MissionDecided@v1", {"mission_id": card["mission_id"], "decision": decision, "text": text})
    if decision == "reject":
        session.machine.to("Planning", "mission rejected")
        session.machine.to("Paused", "mission rejected: nothing was changed; Modify… re-plans with your mission "
                                     "text, or start a new request")
        return session.state
    if decision == "modify":
        await LOOP.revise(rt, "The person modified the mission. Plan exactly this mission, nothing beyond it:\n"
                          + str(text), unit="planner:mission")
        new = missions.build(session.plan, session.hetun.get("research") or {}, rt.config,  # type: ignore[arg-type]
                             version=int(card["version"]) + 1, text=text)
        session.emit("MissionProposed@v1", {"mission": new})
        session.machine.to("Paused", "modified mission ready: approve, reject or modify it")
        return session.state
    return await execute(rt, approvals)


async def execute(rt: SessionRuntime, approvals: Any) -> str:
    """Run the approved mission straight through (the loop's own steps, verification and recovery)."""
    return await LOOP.run_to_end(rt, MissionApprovals(rt, approvals))


async def run(rt: SessionRuntime, approvals: Any) -> str:
    """The CLI's Hetun run: propose (when not yet), ask the person, and carry out the decision."""
    session = rt.session
    if not session.hetun.get("mission"):
        await propose(rt, session.prompt)
    while True:
        card = pending_mission(rt)
        if card is None:
            if session.hetun.get("decision") == "approve":
                return await execute(rt, approvals)
            return session.state
        answer = await _ask(rt, missions.render(card, rt.session_id) + QUESTION_SUFFIX,
                            ["approve", "reject", "modify"])
        if isinstance(answer, Refused):
            refusals.stop(rt, answer)  # the mission still waits (run --session ID asks again)
            return session.state
        decision = _ANSWERS.get(answer.strip().lower())
        if decision is None:
            rt.ui.stream("status", f"hetun: {answer.strip()!r} is not approve, reject or modify\n", session_id=rt.session_id)
            continue
        text = None
        if decision == "modify":
            text = await _ask(rt, "The changed mission text (what should be done, per file):", None)
            if isinstance(text, Refused):
                refusals.stop(rt, text)
                return session.state
            if text.strip() == card["text"].strip():
                rt.ui.stream("status", "hetun: the mission text was not changed\n", session_id=rt.session_id)
                continue
        await decide(rt, decision, text, approvals)
        if decision != "modify":
            # Approve already ran the mission; where it stopped (a denied scope growth, a failure) is the
            # person's to act on, not a reason to run it again and ask once more.
            return session.state


async def _ask(rt: SessionRuntime, question: str, choices: list[str] | None) -> str | Refused:
    """The person's answer, or the refusal (cancelled, or no answer within `policy.approval_timeout_seconds`)."""
    session = rt.session
    session.emit("UserQuestionAsked@v1", {"question": question, "choices": choices})
    timeout = rt.config.policy.approval_timeout_seconds
    answer, refusal = await ask_question(rt.ui, question, choices, timeout)
    session.emit("UserQuestionAnswered@v1", {"answer": answer, "cancelled": refusal is not None,
                                             **({"timed_out": True} if refusal == "timeout" else {})})
    if refusal is not None or answer is None:
        card = pending_mission(rt) or {}
        return Refused("mission", refusal or "cancel", f"the mission {card.get('mission_id', '')}".rstrip(),
                       f"no answer within {timeout:g} s" if refusal == "timeout" else "")
    return answer


class MissionApprovals:
    """Approvals while an approved mission runs: its own files without a prompt (checkpoint first),
    anything beyond them stops and asks (`scope.grow`, always explicit)."""

    def __init__(self, rt: SessionRuntime, inner: Any) -> None:
        self.rt = rt
        self.inner = inner
        card = rt.session.hetun.get("mission") or {}
        self.mission_id = card.get("mission_id", "")
        self.files = {f["path"] for f in card.get("files", [])}
        if rt.session.plan is not None:
            self.files |= set(rt.session.plan.files)

    async def decide(self, request: ApprovalRequest, *, force_explicit: bool = False,
                     changes_files: bool = False) -> tuple[ApprovalDecision, str]:
        if request.kind != "patch.apply":  # a command that writes files is no edit of the mission: asked as usual
            return await self.inner.decide(request, force_explicit=force_explicit, changes_files=changes_files)
        outside = sorted(set(request.files) - self.files)
        if outside:
            grown = request.model_copy(update={
                "kind": "scope.grow",
                "title": f"The mission grew: {', '.join(outside)} is not in the approved mission. Apply anyway?",
            })
            decision, by = await self.inner.decide(grown, force_explicit=True)
            if not decision.allowed:
                return decision, by
            self.files |= set(outside)
        await self._checkpoint()
        self.rt.session.emit("PolicyDecision@v1", {"subject": f"patch.apply: {', '.join(request.files)}",
                                                   "allowed": True, "rule": "mission",
                                                   "reason": f"inside the approved mission {self.mission_id}"})
        return ApprovalDecision(request_id=request.request_id, answer="allow_once", reason="approved mission"), "policy"

    async def _checkpoint(self) -> None:
        h = self.rt.session.hetun
        if h.get("checkpoint") and h["checkpoint"].get("mission_id") == self.mission_id:
            return
        files = sorted(self.files)
        checkpoint_id = await self.rt.world.checkpoint(
            files, f"before mission {self.mission_id}", {"mission_id": self.mission_id, "session_id": self.rt.session_id})
        self.rt.session.emit("MissionCheckpoint@v1", {"mission_id": self.mission_id, "checkpoint_id": checkpoint_id,
                                                      "files": files})
