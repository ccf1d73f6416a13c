"""A plan entry says what a failed step waits for: retried or revised while the session runs, the
person once it stopped (live, and replayed by `session/load`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from deepseek_ls.acp.updates import plan_update, replay_updates

PLAN = {"plan_id": "p1", "steps": [{"step_id": "s1", "title": "Fix add", "files": ["app.py"], "status": "failed"},
                                   {"step_id": "s2", "title": "Test it", "status": "pending"}]}
DENIED = "the change was denied; revise the plan or skip the step"


@pytest.mark.parametrize(
    ("state", "says"),
    [
        pytest.param("ExecutingStep", "(failed: will be retried or revised)", id="while-it-runs"),
        pytest.param("Planning", "(failed: will be retried or revised)", id="while-it-replans"),
        pytest.param("Paused", f"(paused: {DENIED}; send 'run' to try again)", id="paused-for-the-person"),
        pytest.param("Failed", "(failed: the model is down; send 'run' to try again)", id="failed"),
    ],
)
def test_a_failed_step_says_what_it_waits_for(state, says):
    reason = "the model is down" if state == "Failed" else DENIED
    first, second = plan_update(PLAN, state, reason).entries
    assert first.content == f"1. Fix add (app.py) {says}" and first.status == "pending"
    assert second.content == "2. Test it" and second.status == "pending"


def _event(n: int, kind: str, payload: dict) -> SimpleNamespace:
    return SimpleNamespace(seq_no=n, kind=kind, payload=payload)


def test_a_replayed_session_shows_the_entry_of_its_last_state():
    running = {**PLAN, "steps": [{**PLAN["steps"][0], "status": "running"}, PLAN["steps"][1]]}
    events = [
        _event(1, "PlanCreated@v1", {"plan": running}),
        _event(2, "SessionStateChanged@v1", {"to_state": "ExecutingStep", "reason": ""}),
        _event(3, "StepMarked@v1", {"plan_id": "p1", "step_id": "s1", "status": "failed"}),
        _event(4, "SessionStateChanged@v1", {"to_state": "Paused", "reason": DENIED}),
    ]
    plans = [u for u in replay_updates(events, lambda p: []) if getattr(u, "session_update", "") == "plan"]
    assert "will be retried" in plans[-2].entries[0].content
    assert f"paused: {DENIED}" in plans[-1].entries[0].content
