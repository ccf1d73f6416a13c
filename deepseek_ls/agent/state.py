"""The session state machine (docs/agent.md, "Session states") and the vocabulary clients show.

Every transition is a `SessionStateChanged@v1` event (the log gives it its
monotonic seq_no). A transition not in `TRANSITIONS` is a bug in the agent and
raises `IllegalTransition`; tests walk the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, get_args

from deepseek_ls.sink import EventSink
from deepseek_ls.store.events import SessionState

STATES: tuple[str, ...] = get_args(SessionState)

# The one vocabulary of what a session is doing, sent in every `Status`
# (lsp/sessions.py) so the clients show it instead of keeping lists of their own.
# Busy: a run is live (cancel pauses it; a restart finds it interrupted).
BUSY_STATES: tuple[str, ...] = ("Planning", "ExecutingStep", "AwaitingApproval", "AwaitingUserInput", "Verifying")
# Busy but waiting for the person's answer: the agent itself is not working.
WAITING_STATES: tuple[str, ...] = ("AwaitingApproval", "AwaitingUserInput")
STATE_LABELS: dict[str, str] = {
    "Idle": "idle",
    "Planning": "planning",
    "ExecutingStep": "executing",
    "AwaitingApproval": "awaiting approval",
    "AwaitingUserInput": "waiting for your answer",
    "Verifying": "verifying",
    "Completed": "completed",
    "Paused": "paused",
    "Failed": "failed",
}


def describe_state(state: str) -> dict[str, object]:
    """`state_label`, `busy` and `working` of `state`, as a `Status` carries them
    (an unknown state is labelled as it is, never busy)."""
    busy = state in BUSY_STATES
    return {"state_label": STATE_LABELS.get(state, state), "busy": busy, "working": busy and state not in WAITING_STATES}

# Paused means "waiting for the person outside a blocking prompt": a plan shown
# as lenses, staged hunks in the editor, a cancelled or killed run to resume.
TRANSITIONS: dict[str, frozenset[str]] = {
    "Idle": frozenset({"Planning", "Completed"}),  # Completed: an `ask` answered
    "Planning": frozenset({"ExecutingStep", "AwaitingUserInput", "Paused", "Completed"}),
    "ExecutingStep": frozenset(
        {"AwaitingApproval", "AwaitingUserInput", "Planning", "Verifying", "Paused", "ExecutingStep", "Completed"}
    ),
    "AwaitingApproval": frozenset({"ExecutingStep", "Verifying", "Planning", "Paused"}),
    "AwaitingUserInput": frozenset({"Planning", "ExecutingStep", "Idle"}),
    "Verifying": frozenset({"ExecutingStep", "Planning", "Completed", "Paused"}),
    # Paused -> Paused: what the session waits for changed (a mission card left unanswered).
    "Paused": frozenset({"ExecutingStep", "Planning", "Verifying", "AwaitingApproval", "Completed", "Paused"}),
    "Completed": frozenset({"Planning"}),
    "Failed": frozenset({"Planning", "Paused"}),  # Paused: resumed after a failure that passed (an LLM error)
}
# Any state may fail; any live state may be paused (cancel, kill).
for _s in STATES:
    TRANSITIONS.setdefault(_s, frozenset())
    extra = {"Failed"} | ({"Paused"} if _s not in ("Completed", "Failed", "Idle") else set())
    TRANSITIONS[_s] = TRANSITIONS[_s] | (extra - {_s})


class IllegalTransition(RuntimeError):
    pass


@dataclass(frozen=True)
class StateChange:
    """One transition, as told to `Agent.on_state_change` listeners (after it is logged)."""

    session_id: str
    from_state: str
    to_state: str
    reason: str


StateListener = Callable[[StateChange], None]


class SessionStateMachine:
    def __init__(self, sink: EventSink, state: str = "Idle") -> None:
        if state not in STATES:
            raise ValueError(f"unknown session state {state!r}")
        self.sink = sink
        self.state = state
        # Told of every transition once its event is durable (the agent's status push).
        self.listener: Callable[[str, str, str], None] | None = None

    def can(self, to_state: str) -> bool:
        return to_state in TRANSITIONS[self.state]

    def to(self, to_state: str, reason: str = "", **detail: object) -> None:
        """Move to `to_state`; `detail` is recorded with the event (e.g. `error_kind` of a failure)."""
        if not self.can(to_state):
            raise IllegalTransition(f"illegal session transition {self.state} -> {to_state} ({reason})")
        from_state = self.state
        self.sink.emit(
            "SessionStateChanged@v1", {"from_state": from_state, "to_state": to_state, "reason": reason, **detail}
        )
        self.state = to_state
        if self.listener is not None:
            self.listener(from_state, to_state, reason)

    @property
    def terminal(self) -> bool:
        return self.state in ("Completed", "Failed")
