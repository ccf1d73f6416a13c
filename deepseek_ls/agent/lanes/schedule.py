"""Which steps of a plan may run at once, each in its own lane.

A wave is taken from the open steps (pending, running or failed) in plan
order. A pending step joins it when it declares files, shares none of them
with an earlier open step, and depends (`depends_on`) on no open step. Steps
that touch the same files as an earlier one, or depend on one, wait: they run
after the wave, in the workspace, as they would without lanes. A wave exists
only when the sequential loop would run its first step now and it has at
least two steps.
"""

from __future__ import annotations

from deepseek_ls.agent.plan import Plan, Step

OPEN = ("pending", "running", "failed")


def _refers_to(ref: str, step: Step, number: int) -> bool:
    ref = ref.strip()
    return ref == step.step_id or ref.casefold() == step.title.casefold() or ref == str(number)


def depends_on_open(plan: Plan, step: Step) -> bool:
    """Whether `step` names, in `depends_on`, a step that is not done or skipped."""
    for n, other in enumerate(plan.steps, start=1):
        if other is step or other.status not in OPEN:
            continue
        if any(_refers_to(ref, other, n) for ref in step.depends_on):
            return True
    return False


def wave(plan: Plan) -> list[Step]:
    """The steps to run in lanes now (plan order), or [] when lanes would not help."""
    open_steps = [s for s in plan.steps if s.status in OPEN]
    if not open_steps or open_steps[0].status != "pending":
        return []
    chosen: list[Step] = []
    seen_files: set[str] = set()
    for step in open_steps:
        free = (step.status == "pending" and step.intent != "fix" and bool(step.files)
                and not seen_files.intersection(step.files) and not depends_on_open(plan, step))
        if free:
            chosen.append(step)
        elif step is open_steps[0]:
            return []  # the next step must run alone (it needs others' results): no wave now
        seen_files.update(step.files)
    return chosen if len(chosen) >= 2 else []
