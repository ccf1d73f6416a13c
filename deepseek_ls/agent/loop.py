"""The agent loop: plan → execute step → approve/apply → verify → recover (docs/agent.md).

Two drivers use the same pieces:

* the language server goes step by step: `plan`, `execute_step` (stages
  patches, the editor applies accepted hunks), `settle_step` (verify, mark,
  recover);
* the CLI runs `run_to_end`, where approval goes through the UI port and apply
  through the patch store.

Recovery: a patch mismatch goes back to the executor
with the error; a mechanical verification failure adds a local "fix" step for
the executor; repeated or design failures go back to the planner with the
router nudged towards max-think. Every failure counts against
`agent_loop.max_iterations`; when spent the session fails and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.agent import refusals
from deepseek_ls.agent.executor import Executor
from deepseek_ls.agent.failures import Failure
from deepseek_ls.agent.lanes import run_wave
from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.planner import Planner
from deepseek_ls.agent.runtime import AgentFailure, SessionRuntime
from deepseek_ls.agent.steps import current_plan, mark
from deepseek_ls.policy.approvals import Refused
from deepseek_ls.ui_port import ApprovalRequest


@dataclass
class StepOutcome:
    session_id: str
    step_id: str
    status: str
    patch_ids: list[str] = field(default_factory=list)
    state: str = ""
    message: str = ""
    next_step_id: str | None = None
    unsaved: list[str] = field(default_factory=list)  # verification waits for these buffers to be saved

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


UNSAVED_REASON = "to verify (verification runs on the files on disk)"


def waiting_for_save(state_reason: str | None) -> bool:
    """Whether a session is Paused because changes applied in editor buffers are not saved yet."""
    return bool(state_reason) and str(state_reason).startswith("save ") and UNSAVED_REASON in str(state_reason)


def _to(rt: SessionRuntime, state: str, reason: str) -> None:
    machine = rt.session.machine
    if machine.state != state or state == "ExecutingStep":
        machine.to(state, reason)


class AgentLoop:
    def __init__(self) -> None:
        self.planner = Planner()
        self.executor = Executor()

    # -- planning ----------------------------------------------------------------

    async def plan(self, rt: SessionRuntime, prompt: str, context: str | None = None) -> Plan:
        _to(rt, "Planning", "planning the request")
        rt.session.emit("TurnAdded@v1", {"role": "user", "content": prompt, "agent_role": "planner"})
        plan = await self.planner.make_plan(rt, prompt, context=context)
        rt.session.emit("PlanCreated@v1", {"plan": plan.to_json()})
        return rt.session.plan  # type: ignore[return-value]

    async def revise(self, rt: SessionRuntime, feedback: str, step_id: str | None = None, *, unit: str = "planner:revise") -> Plan:
        session = rt.session
        previous = session.plan
        if previous is None:
            raise AgentFailure("there is no plan to revise yet; make a plan first")
        _to(rt, "Planning", "revising the plan")
        title = previous.step(step_id).title if step_id else None
        new = await self.planner.make_plan(
            rt, session.prompt, previous=previous, feedback=feedback, step_title=title, unit=unit
        )
        self._emit_revision(rt, previous.revised(new), previous, feedback)
        return session.plan  # type: ignore[return-value]

    def _emit_revision(self, rt: SessionRuntime, plan: Plan, previous: Plan, feedback: str) -> None:
        rt.session.emit(
            "PlanRevised@v1", {"plan": plan.to_json(), "previous_version": previous.version, "feedback": feedback}
        )

    # -- one step ----------------------------------------------------------------

    async def execute_step(self, rt: SessionRuntime, step_id: str, feedback: str | None = None) -> StepOutcome:
        """Stage the step's patches (nothing applied). Recovers from mismatches and scope growth."""
        session = rt.session
        while True:
            plan = current_plan(rt)
            step = plan.step(step_id)
            if step.status in ("done", "skipped"):
                return step_outcome(rt, step, message=f"step is already {step.status}")
            rt.check_failure_budget()
            _to(rt, "ExecutingStep", f"step: {step.title}")
            mark(rt, plan, step, "running")
            if feedback is None and step.intent == "fix":
                feedback = session.last_verify_output
            result = await self.executor.execute(rt, plan, step, feedback=feedback)
            if result.kind == "patches":
                _to(rt, "AwaitingApproval", f"{len(result.patch_ids)} patch(es) staged for review")
                return step_outcome(rt, step, patch_ids=result.patch_ids, status="staged")
            if result.kind == "no_change":
                mark(rt, plan, step, "done", result.reason)
                return step_outcome(rt, step, message=result.reason)
            if result.kind == "need_file":
                files = ", ".join(f for f, _ in result.need_files)
                failure = rt.classifier.patch_mismatch(f"out of scope: step '{step.title}' needs {files}")
                rt.check_failure_budget()
                why = "; ".join(f"{f}: {r}" for f, r in result.need_files)
                new = await self.revise(rt, f"The step '{step.title}' also needs these files: {why}. "
                                        "Declare every file a step edits.", step.step_id)
                step_id = self._same_step(new, step).step_id
                feedback = failure.detail
                continue
            if result.kind == "missing_path":
                missing = [f for f, _ in result.need_files]
                failure = rt.classifier.patch_mismatch(f"step '{step.title}' edits files that do not exist: {', '.join(missing)}")
                rt.check_failure_budget()
                hints = "; ".join([f"{m} (existing files with similar names: {', '.join(await rt.world.similar_paths(m)) or 'none'})"
                                   for m in missing])
                new = await self.revise(rt, f"The step '{step.title}' edits files that do not exist: {hints}. "
                                        "Use the real paths, or make the step create the file.", step.step_id)
                step_id = self._same_step(new, step).step_id
                feedback = failure.detail
                continue
            # patch_mismatch: back to the executor with the error, within the failure budget.
            feedback = result.reason if result.classified else rt.classifier.patch_mismatch(result.reason).detail

    async def settle_step(self, rt: SessionRuntime, step_id: str) -> StepOutcome:
        """After the step's hunks were accepted/rejected: mark it, verify when the plan is finished, recover."""
        plan = current_plan(rt)
        step = plan.step(step_id)
        records = rt.session.step_patches(step_id)
        pending = [r for r in records if not r.settled]
        if pending:
            return step_outcome(rt, step, patch_ids=[r.patch_id for r in pending], status="staged",
                                 message="some hunks are still waiting for accept/reject")
        if records and not any(r.applied for r in records):
            mark(rt, plan, step, "failed", "every hunk was rejected")
            _to(rt, "Paused", "the change was rejected; revise the plan or skip the step")
            return step_outcome(rt, step, message="every hunk was rejected")
        mark(rt, plan, step, "done")
        return await self.after_step(rt, step)

    async def after_step(self, rt: SessionRuntime, step: Step) -> StepOutcome:
        plan = current_plan(rt)
        nxt = plan.next_pending()
        if nxt is not None:
            _to(rt, "Paused", "step done; next step ready")
            return step_outcome(rt, step, next_step_id=nxt.step_id)
        return await self.verify(rt, step)

    async def verify(self, rt: SessionRuntime, step: Step) -> StepOutcome:
        plan = current_plan(rt)
        # Changes applied into editor buffers reach the disk, where the commands run, only when saved.
        applied = sorted({f for r in rt.session.patches.values() if r.applied for f in r.files})
        waiting = await rt.world.unsaved(applied)
        if waiting:
            message = f"save {', '.join(waiting)} {UNSAVED_REASON}"
            _to(rt, "Paused", message)
            return step_outcome(rt, step, message=message, unsaved=waiting)
        _to(rt, "Verifying", "verifying the change")
        token = f"deepseek-{rt.session_id}-verify"
        rt.ui.progress(token, "verifying: " + (", ".join(plan.verification) or "derived commands"))
        outcome = "verification stopped"
        try:
            result = await rt.verifier.verify(plan.verification)
            if result.ok:
                outcome = f"verification passed: {', '.join(result.commands)}" if result.commands else \
                    "verification: no command to run"
            elif result.not_run is not None or result.refused is not None:
                why = result.not_run if result.not_run is not None else result.refused
                outcome = f"verification not run: `{result.command}`: {str(why)[:200]}"
            else:
                last = _summary_line(result.output)
                outcome = f"verification failed: `{result.command}`" + (f": {last[:200]}" if last else "")
        finally:
            rt.ui.progress(token, outcome, done=True)
        if result.ok:
            rt.classifier.verify_passed()
            _to(rt, "Completed", "verification passed" if result.commands else "done (no verification command)")
            return step_outcome(rt, step)
        if rt.verify_advisory and result.refused is None and result.not_run is None:
            # A teammate lane verifies only part of the plan: its result is verified again once merged.
            _to(rt, "Completed", f"{outcome} (in the lane; the merged result is verified again)")
            return step_outcome(rt, step, message=outcome)
        if result.refusal is not None:  # the person did not approve it: their "no" decides (refusals.py)
            return step_outcome(rt, step, status="failed", message=refusals.stop(rt, result.refusal))
        if result.refused is not None:
            # Not the code's fault: the model cannot fix it, a person decides (approve, edit the plan, run it).
            message = (f"verification command {result.command!r} was not run ({result.refused}); approve it, "
                       "change the plan's verification, or run it yourself")
            _to(rt, "Paused", message)
            return step_outcome(rt, step, status="failed", message=message)
        if result.not_run is not None:
            # Nor is a program that cannot run here: the person installs it (or changes the plan).
            message = (f"verification command {result.command!r} was not run: {result.not_run}; then resume, "
                       "or change the plan's verification")
            _to(rt, "Paused", message)
            return step_outcome(rt, step, status="failed", message=message)
        failure = rt.classifier.verify_failed(result.command or "", result.output)
        rt.check_failure_budget()
        nxt = await self.recover(rt, failure)
        _to(rt, "Paused", f"verification failed ({failure.failure_class}); next: {nxt.title}")
        return step_outcome(rt, step, status="failed", message=failure.detail, next_step_id=nxt.step_id)

    async def recover(self, rt: SessionRuntime, failure: Failure) -> Step:
        """The step that handles `failure`: a local fix step (mechanical) or a planner revision."""
        plan = current_plan(rt)
        if failure.goes_to_planner:
            rt.classifier.note_replan()
            plan = await self.revise(
                rt,
                f"{failure.failure_class}: {failure.detail}\n{rt.session.last_verify_output}",
                unit=f"planner:recover:{rt.session.failures}",
            )
            nxt = plan.next_pending()
            if nxt is not None:
                return nxt
        fix = Step(title=f"Fix: {failure.detail}", intent="fix", files=plan.files)
        revised = plan.model_copy(update={"version": plan.version + 1, "steps": [*plan.steps, fix]})
        self._emit_revision(rt, revised, plan, failure.detail)
        return fix

    # -- the whole loop (CLI, autopilot) -------------------------------------------------

    async def run_to_end(self, rt: SessionRuntime, approvals) -> str:
        """Drive the session until Completed, Failed or Paused (a person must act). Resumable.

        It stops as soon as the session is paused with nothing it may go on to (a refusal, a change
        left staged, buffers to save), and it never goes round without progress: a pass that finds the
        plan, its steps, the patches, the lanes and the failure count as an earlier pass left them
        pauses the session instead of asking, verifying or logging the same thing again."""
        session = rt.session
        seen: set[tuple[Any, ...]] = set()
        while not session.machine.terminal:
            mark = _progress(rt)
            if mark in seen:
                _to(rt, "Paused", "stopped: the loop came back to where it was without progress; "
                                  "run the session again, or revise the plan")
                return session.state
            seen.add(mark)
            plan = session.plan
            if plan is None:
                await self.plan(rt, session.prompt)
                if session.mode == "plan":
                    _to(rt, "Paused", "plan ready")
                    return session.state
                continue
            if not plan.steps:
                _to(rt, "Completed", f"nothing to change: {plan.no_edit_reason or plan.goal}")
                continue
            step = plan.next_pending()
            if step is None:
                if _waits(session, await self.verify(rt, plan.steps[-1])):
                    return session.state  # refused, unsaved buffers: the person acts first
                continue
            # A running step with patches resumes at approval (or at settling, when its hunks were
            # decided elsewhere); any other step is executed.
            records = session.step_patches(step.step_id) if step.status == "running" else []
            if not records:
                if await run_wave(rt) is not None:
                    if session.state == "Paused":
                        return session.state  # a lane stopped on the person's "no"
                    continue  # a wave of teammate lanes ran: its steps are staged, done, or left to run here
                outcome = await self.execute_step(rt, step.step_id, feedback=rt.lane_feedback.pop(step.step_id, None))
                # A revision (wrong path, undeclared file) may have replaced the step: go on with the new one.
                step = current_plan(rt).step(outcome.step_id)
                if outcome.status != "staged":
                    if outcome.status == "done" and not current_plan(rt).next_pending():
                        if _waits(session, await self.verify(rt, step)):
                            return session.state
                    continue
            unsettled = [r for r in session.step_patches(step.step_id) if not r.settled]
            if unsettled:
                _to(rt, "AwaitingApproval", "approve the staged change")
                if not await self._approve_and_apply(rt, step, unsettled, approvals):
                    return session.state
            outcome = await self.settle_step(rt, step.step_id)
            if outcome.status == "staged":
                _to(rt, "Paused", outcome.message)  # hunks neither applied nor rejected: the person decides
                return session.state
            if _waits(session, outcome):
                return session.state  # the person must act (e.g. every hunk was rejected)
        return session.state

    async def _approve_and_apply(self, rt: SessionRuntime, step: Step, records, approvals) -> bool:
        session = rt.session
        for rec in records:
            ps = rt.world.patch(rec.patch_id)
            pending = [h for h in ps.hunks if h.status == "pending"]
            if not pending:
                continue
            previous = next((rid for rid, p in session.pending_approvals.items() if p.get("patch_id") == ps.patch_id), None)
            request = ApprovalRequest(
                request_id=previous or f"apply-{ps.patch_id}",
                kind="patch.apply",
                title=f"Apply {len(pending)} hunk(s) to {', '.join(ps.files)} (step: {step.title})",
                detail=ps.diff,
                files=ps.files,
                hunk_ids=[h.hunk_id for h in pending],
                patch_id=ps.patch_id,
                session_id=session.session_id,
            )
            decision, by = await approvals.decide(request, force_explicit=ps.approval_required)
            if not decision.allowed and by == "policy":
                _to(rt, "Paused", f"patch {ps.patch_id} is staged; applying is off by policy "
                                  f"(deepseek-ls apply {ps.patch_id} applies it)")
                return False
            if not decision.allowed:
                await refusals.refuse_change(rt, step, Refused(
                    request.kind, decision.answer, ", ".join(ps.files), decision.reason,  # type: ignore[arg-type]
                    patch_id=ps.patch_id))
                return False
            result = await rt.world.apply(ps.patch_id)
            if result.refused:  # the editor said no to its write: a refused change, not a mismatch to redo
                await rt.world.reject(ps.patch_id, None, result.message)
                mark(rt, current_plan(rt), step, "failed", result.message)
                _to(rt, "Paused", result.message)
                return False
            if not result.ok:
                failure = rt.classifier.patch_mismatch(f"applying {ps.patch_id} failed: {result.message}")
                await rt.world.reject(ps.patch_id, None, "could not be applied")
                rt.check_failure_budget()
                outcome = await self.execute_step(rt, step.step_id, feedback=failure.detail)
                fresh = [r for r in session.step_patches(step.step_id) if not r.settled]
                if outcome.status != "staged":
                    return True
                return await self._approve_and_apply(rt, step, fresh, approvals)
        return True

    # -- helpers -------------------------------------------------------------------

    @staticmethod
    def _same_step(plan: Plan, old: Step) -> Step:
        for s in plan.steps:
            if s.title == old.title or set(old.files) <= set(s.files):
                if s.status not in ("done", "skipped"):
                    return s
        nxt = plan.next_pending()
        if nxt is None:
            raise AgentFailure("the revised plan has no step left to run")
        return nxt


def step_outcome(rt: SessionRuntime, step: Step, *, patch_ids=None, status: str | None = None,
                 message: str = "", next_step_id: str | None = None, unsaved: list[str] | None = None) -> StepOutcome:
    """What a step request came to, for its driver: the step's status now (or `status`), the
    session's state, the patches staged and the step to run next."""
    current = step.status
    if rt.session.plan is not None:
        # A revision may have replaced the step (recovery by the planner).
        current = next((s.status for s in rt.session.plan.steps if s.step_id == step.step_id), "replaced")
    return StepOutcome(
        session_id=rt.session_id,
        step_id=step.step_id,
        status=status or current,
        patch_ids=list(patch_ids or []),
        state=rt.session.state,
        message=message,
        next_step_id=next_step_id,
        unsaved=list(unsaved or []),
    )


# The one loop the operations and the Hetun driver run (it keeps no state of its own).
LOOP = AgentLoop()


def _waits(session: Any, outcome: StepOutcome) -> bool:
    """The session is paused with no step to go on to: the person acts before anything else runs."""
    return session.state == "Paused" and outcome.next_step_id is None


def _progress(rt: SessionRuntime) -> tuple[Any, ...]:
    """What a pass of `run_to_end` changes when it gets anywhere: the plan and its steps' statuses,
    the patches' settled hunks, the failures counted, the lanes that failed."""
    session, plan = rt.session, rt.session.plan
    return (
        plan.version if plan else None,
        tuple((s.step_id, s.status) for s in plan.steps) if plan else (),
        tuple((r.patch_id, len(r.applied), len(r.rejected)) for r in session.patches.values()),
        session.failures,
        tuple(sorted(rt.lane_failed)),
    )


def _summary_line(output: str) -> str:
    """The line of a command's output that best says why it failed (the last naming a failure or error)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in reversed(lines) if re.search(r"fail|error", line, re.IGNORECASE)),
                lines[-1] if lines else "")
