"""The orchestrator: run a wave of independent steps in lanes, then stage their results in step order.

Only the orchestrator writes to the person's workspace, and only the way the
sequential loop does: each lane's diff is staged as an ordinary `PatchSet` of
its step (`World.stage`, against what the person sees now, open buffers
included), in plan order whatever order the lanes finished in. The person then
reviews it per hunk as usual; yolo / autopilot apply it as usual. Then the
plan's verification runs once over the merged result.

A lane that failed, timed out or was cancelled leaves its step pending: the
loop runs it in the workspace as it would without lanes. A lane that stopped on
the person's "no" (an approval it asked for denied, cancelled or unanswered)
leaves its step pending too, but the session pauses after the merge saying so
(`agent/refusals.py`): the step is not run again here, where it would ask again.
The lanes' calls are charged to the session (`agent/ledger.py`: one ledger per
session): when together they pass its cost or token cap, no lane makes another
call, what they finished is merged as usual, and the session pauses with the
reason before its next call.

A lane result that cannot be merged — it changes a file an earlier lane of
the wave changed, or its hunks no longer fit the workspace (the person edited
those lines meanwhile) — is a `PatchMismatch`: counted against the failure budget, and the
step runs again in the workspace with the conflict as feedback. A failed
verification after the merge goes into the ordinary recovery loop.

A lane's deletions and new files are staged as deletions and additions, reviewed
like any hunk. A result that changed a file that is not UTF-8 text (binary), or
a file's mode (`chmod +x`), is refused whole, naming the file — never staged in
part, never merged without its mode — and its step runs in the workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepseek_ls.agent import refusals
from deepseek_ls.agent.lanes.schedule import wave
from deepseek_ls.patch import PatchError
from deepseek_ls.policy.approvals import Refused

if TYPE_CHECKING:
    from deepseek_ls.agent.lanes.runner import LaneResult
    from deepseek_ls.agent.plan import Step
    from deepseek_ls.agent.runtime import SessionRuntime


async def run_wave(rt: "SessionRuntime", want: str | None = None) -> list[str] | None:
    """Run the plan's current wave in lanes and stage the results; the patch ids staged, or None
    when no wave ran (teammate mode off, fewer than two independent steps, no git repository,
    or step `want` is not in the wave)."""
    session = rt.session
    plan = session.plan
    if not rt.teammate_mode or rt.lanes is None or plan is None:
        return None
    steps = [s for s in wave(plan) if s.step_id not in rt.lane_failed]
    if len(steps) < 2 or steps[0].step_id != plan.next_pending().step_id:  # type: ignore[union-attr]
        return None
    if want is not None and want not in {s.step_id for s in steps}:
        return None
    problem = await rt.lanes.problem()
    if problem is not None:
        if not rt.lane_notice_given:
            rt.lane_notice_given = True
            rt.ui.stream("status", f"teammate mode: lanes need a git repository with a commit ({problem}); "
                                   "running the steps one after the other", session_id=session.session_id)
        return None
    _to(rt, "ExecutingStep", f"teammate lanes: {len(steps)} steps at once")
    results = await rt.lanes.run(rt, plan, steps)
    refused = [r for r in results if r.refusal]
    staged: list[str] = []
    merged_files: dict[str, str] = {}  # file -> title of the step whose lane changed it
    for step, result in zip(steps, results):
        current = session.plan.step(step.step_id)  # type: ignore[union-attr]
        if not result.ok:
            if not result.refusal:
                rt.lane_failed.add(step.step_id)  # it runs in the workspace, not in another lane
            continue
        if result.binary or result.modes:
            _refuse(rt, result, current)
            continue
        if not result.diff.strip():
            _mark(rt, current.step_id, "done", "no change (teammate lane)")
            session.emit("LaneMerged@v1", {"lane_id": result.lane_id, "step_id": step.step_id, "ok": True})
            continue
        conflict = None
        overlap = sorted(f for f in result.files if f in merged_files)
        if overlap:
            conflict = (f"its lane changed {', '.join(overlap)}, which the lane of step "
                        f"'{merged_files[overlap[0]]}' changed too")
        else:
            _mark(rt, current.step_id, "running", "merging its teammate lane")
            try:
                ps = await rt.world.stage(result.diff, session_id=session.session_id,
                                          allowed_files=sorted(set(current.files) | set(result.files)))
            except PatchError as exc:
                conflict = f"its lane's change no longer fits the workspace: {exc}"
                _mark(rt, current.step_id, "pending", "its lane could not be merged")
        if conflict is not None:
            session.emit("LaneMerged@v1", {"lane_id": result.lane_id, "step_id": step.step_id, "ok": False,
                                           "conflict": conflict})
            failure = rt.classifier.patch_mismatch(f"step '{current.title}' could not be merged: {conflict}")
            rt.lane_feedback[step.step_id] = failure.detail
            rt.lane_failed.add(step.step_id)
            rt.ui.stream("status", f"lane of step '{current.title}' not merged: {conflict}; it runs in the workspace",
                         session_id=session.session_id)
            continue
        session.emit("LaneMerged@v1", {"lane_id": result.lane_id, "step_id": step.step_id, "ok": True,
                                       "patch_ids": [ps.patch_id]})
        staged.append(ps.patch_id)
        merged_files.update({f: current.title for f in result.files})
    rt.check_failure_budget()
    if refused:
        first = refused[0]
        more = f" (and {len(refused) - 1} more lane(s))" if len(refused) > 1 else ""
        title = session.plan.step(first.step_id).title  # type: ignore[union-attr]
        lane = first.refusal or {}
        refusals.stop(rt, Refused("lane", lane["answer"], f"the lane of step '{title}' stopped{more}: "
                                  f"{lane.get('subject', '')}", lane.get("reason", "")))
        return staged
    if staged:
        _to(rt, "AwaitingApproval", f"{len(staged)} lane result(s) staged for review")
    return staged


def _refuse(rt: "SessionRuntime", result: "LaneResult", step: "Step") -> None:
    """A lane result that changed a file that is not UTF-8 text, or a file's mode (`chmod +x`): a
    PatchSet (text hunks the person reviews) cannot carry it, and staging only the rest would
    half-apply the step (or drop the mode without a word). Nothing of it is merged; the step runs
    in the workspace, as without lanes, where the change is made as it is. Not a conflict: nothing
    clashed."""
    session = rt.session
    why = []
    if result.binary:
        what = "is not" if len(result.binary) == 1 else "are not"
        why.append(f"its lane changed {', '.join(result.binary)}, which {what} UTF-8 text")
    if result.modes:
        why.append(f"its lane changed the mode of {', '.join(result.modes)}")
    reason = "; ".join(why) + "; a lane's result is handed back as text hunks for review, so none of it was merged"
    session.emit("LaneMerged@v1", {"lane_id": result.lane_id, "step_id": step.step_id, "ok": False,
                                   "conflict": reason, "binary_files": result.binary,
                                   "mode_changes": result.modes})
    rt.lane_feedback[step.step_id] = (f"step '{step.title}' ran in a teammate lane, but {reason}; "
                                      "it runs here in the workspace instead")
    rt.lane_failed.add(step.step_id)
    rt.ui.stream("status", f"lane of step '{step.title}' not merged: {reason}; it runs in the workspace",
                 session_id=session.session_id)


def _to(rt: "SessionRuntime", state: str, reason: str) -> None:
    machine = rt.session.machine
    if machine.state != state or state == "ExecutingStep":
        machine.to(state, reason)


def _mark(rt: "SessionRuntime", step_id: str, status: str, reason: str) -> None:
    plan = rt.session.plan
    assert plan is not None
    rt.session.emit("StepMarked@v1", {"plan_id": plan.plan_id, "step_id": step_id, "status": status, "reason": reason})
