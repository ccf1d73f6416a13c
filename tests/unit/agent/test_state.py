import pytest

from deepseek_ls.agent.state import (
    BUSY_STATES,
    STATE_LABELS,
    STATES,
    TRANSITIONS,
    WAITING_STATES,
    IllegalTransition,
    SessionStateMachine,
    describe_state,
)
from deepseek_ls.sink import ListSink


def test_happy_path_emits_one_event_per_transition():
    sink = ListSink()
    sm = SessionStateMachine(sink)
    for to in ["Planning", "ExecutingStep", "AwaitingApproval", "Verifying", "Completed"]:
        sm.to(to, "test")
    assert sm.state == "Completed" and sm.terminal
    assert [p["to_state"] for _, p in sink.events] == ["Planning", "ExecutingStep", "AwaitingApproval", "Verifying", "Completed"]
    assert all(k == "SessionStateChanged@v1" for k in sink.kinds())


@pytest.mark.parametrize(
    "start, to",
    [
        pytest.param(s, t, id=f"{s}->{t}")
        for s in STATES
        for t in STATES
        if t not in TRANSITIONS[s]
    ],
)
def test_every_transition_outside_the_table_raises(start, to):
    sink = ListSink()
    sm = SessionStateMachine(sink, state=start)
    with pytest.raises(IllegalTransition):
        sm.to(to)
    assert sink.events == [] and sm.state == start


def test_ask_user_cancel_returns_to_idle():
    sm = SessionStateMachine(ListSink(), state="Planning")
    sm.to("AwaitingUserInput")
    sm.to("Idle", "question cancelled")
    assert sm.state == "Idle"


def test_any_state_can_fail_but_completed_cannot_be_paused():
    for s in STATES:
        if s != "Failed":
            assert SessionStateMachine(ListSink(), state=s).can("Failed")
    assert not SessionStateMachine(ListSink(), state="Completed").can("Paused")


def test_the_state_vocabulary_names_every_state_once():
    assert set(STATE_LABELS) == set(STATES) and len(set(STATE_LABELS.values())) == len(STATES)
    assert set(WAITING_STATES) < set(BUSY_STATES) < set(STATES)
    assert describe_state("AwaitingApproval") == {"state_label": "awaiting approval", "busy": True, "working": False}
    assert describe_state("ExecutingStep") == {"state_label": "executing", "busy": True, "working": True}
    assert describe_state("Paused") == {"state_label": "paused", "busy": False, "working": False}
    # A state this server does not know is shown as it is, never busy.
    assert describe_state("Rebasing") == {"state_label": "Rebasing", "busy": False, "working": False}
