"""One ledger per session: the calls of its teammate lanes are charged to it, and its caps stop them.

A lane is a session of its own (agent/lanes), with its own log and its own calls.
Each `LLMCall@v1` a lane records is also recorded in the session that spawned it
as `LedgerCharged@v1` (`CostLedger` folds it like a call of its own), so the
session's spend is the sum of every call made for it: its own, its lanes', and
its Hetun helper blocks' (those already call the model through the session).

Before each of its calls a lane checks the *session's* spend against
`budget.max_cost` / `budget.max_tokens` (`LaneShare.over`): when two lanes
together pass a cap, the next call of any lane stops, recording
`LedgerCapReached@v1` in the lane's log (so the lane replays on its own: see
`RecordedShare`), and the session pauses after the wave with the reason
(`lanes/orchestrator.py` checks the cap when the lanes are back).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deepseek_ls.llm.budget import Spend, budget_message, over_budget

CHARGED = "LedgerCharged@v1"
CAP_REACHED = "LedgerCapReached@v1"
# What of a lane's `LLMCall@v1` the session's ledger keeps (as `CostLedger.add` does).
_CALL_FIELDS = ("call_id", "role", "profile", "model", "model_entry", "error", "started_at", "usage")


def cap_reason(spend: Spend, budget: Any, session_id: str) -> str | None:
    """Why `spend` may not grow (`budget.max_cost` or `budget.max_tokens` reached), or None."""
    if over_budget(spend, budget.max_cost):
        return budget_message(spend, budget.max_cost, session_id)
    if budget.max_tokens is not None and spend.tokens.total >= budget.max_tokens:
        return (f"token budget reached: this session used {spend.tokens.total} tokens of max_tokens "
                f"{budget.max_tokens}; raise budget.max_tokens and resume with: deepseek-ls run --session "
                f"{session_id[:13]}")
    return None


class LaneShare:
    """A lane's link to the session that spawned it (live): charges its calls there, checks its caps."""

    def __init__(self, parent: Any, lane_id: str, step_id: str) -> None:
        self.parent, self.lane_id, self.step_id = parent, lane_id, step_id

    def charge(self, lane_session_id: str, call: Mapping[str, Any]) -> None:
        self.parent.emit(CHARGED, {"lane_id": self.lane_id, "step_id": self.step_id,
                                   "lane_session_id": lane_session_id,
                                   "call": {k: call.get(k) for k in _CALL_FIELDS if call.get(k) is not None}})

    def over(self, rt: Any) -> str | None:
        """The session's cap reason when its spend (every lane's included) reached a cap; recorded in the lane."""
        why = cap_reason(self.parent.costs.total(), rt.config.budget, self.parent.session_id)
        if why is not None:
            rt.session.emit(CAP_REACHED, {"session_id": self.parent.session_id, "reason": why})
        return why


class RecordedShare:
    """A replayed lane's link: it stops where the recording says the session's cap stopped it live
    (a `LedgerCapReached@v1` before the next recorded model call)."""

    def __init__(self, rec: Any) -> None:
        self.rec = rec

    def over(self, rt: Any) -> str | None:
        stops = self.rec.queues[CAP_REACHED]
        calls = self.rec.queues["LLMCall@v1"]
        if not stops or (calls and calls[0].seq_no < stops[0].seq_no):
            return None
        stop = self.rec.take(CAP_REACHED)
        rt.session.emit(CAP_REACHED, stop.payload)
        return str(stop.payload["reason"])
