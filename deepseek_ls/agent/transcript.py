"""A session's conversation, folded from its events: what a chat view shows.

Each turn is a prompt the person gave or an answer the model gave. An answer
carries what produced it: the model and profile, the router's explanation (the
same text as the hover), its tokens (cache hit / miss / output) and money, from
the `LLMCall@v1` events recorded while it was asked for (continuations and
retries included). Pure: folded from `(kind, payload)` pairs in log order and
priced when read, like `llm.budget.CostLedger`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.llm.budget import CallCost, Spend

# The person's prompts worth showing: an executor's or verifier's "user" turn is our own prompt.
PERSON_ROLES = ("planner", "ask", "chat")


@dataclass
class _Turn:
    seq: int
    role: str
    agent_role: str | None
    content: str
    reasoning: str | None = None
    tools: list[str] = field(default_factory=list)
    decision_id: str | None = None
    step_id: str | None = None
    calls: tuple[int, int] = (0, 0)  # [first, end) indices into the session's calls


class Transcript:
    """The turns of one session. `fold(kind, payload)` takes every event; `turns()` gives JSON."""

    def __init__(self) -> None:
        self._turns: list[_Turn] = []
        self._decisions: dict[str, dict[str, Any]] = {}
        self._calls = 0  # LLMCall events seen
        self._answered = 0  # calls already attached to an answer
        self._step: str | None = None
        self._seen = 0

    def fold(self, kind: str, p: Mapping[str, Any]) -> None:
        self._seen += 1
        if kind == "LLMCall@v1":
            self._calls += 1
        elif kind == "RouterDecision@v1" and p.get("decision_id"):
            self._decisions[str(p["decision_id"])] = dict(p)
        elif kind == "StepMarked@v1":
            if p.get("status") == "running":
                self._step = p.get("step_id")
            elif p.get("step_id") == self._step:
                self._step = None
        elif kind == "TurnAdded@v1":
            self._turn(p)

    def _turn(self, p: Mapping[str, Any]) -> None:
        role, agent_role = p.get("role"), p.get("agent_role")
        if role == "user" and agent_role in PERSON_ROLES:
            self._turns.append(_Turn(self._seen, "user", agent_role, str(p.get("content") or ""), step_id=self._step))
        elif role == "assistant":
            tools = [str((c.get("function") or {}).get("name") or c.get("name") or "tool")
                     for c in p.get("tool_calls") or [] if isinstance(c, Mapping)]
            self._turns.append(_Turn(
                self._seen, "assistant", agent_role, str(p.get("content") or ""), p.get("reasoning_content") or None,
                tools, p.get("decision_id"), self._step, (self._answered, self._calls),
            ))
            self._answered = self._calls

    @property
    def size(self) -> int:
        """How many turns there are (a cheap change marker for clients)."""
        return len(self._turns)

    def turns(self, calls: list[CallCost], explain: Any = None) -> list[dict[str, Any]]:
        """The turns as JSON. `calls`: the session's priced calls in order (`CostLedger.calls`);
        `explain(decision) -> RoutingExplanation` turns a `RouterDecision@v1` payload into
        what the hover shows."""
        out = []
        for t in self._turns:
            turn: dict[str, Any] = {"turn_id": f"t{t.seq}", "role": t.role, "agent_role": t.agent_role,
                                    "content": t.content, "step_id": t.step_id}
            if t.role == "assistant":
                mine = calls[t.calls[0]:t.calls[1]]
                spend = Spend()
                for call in mine:
                    spend.add(call.tokens, call.cost, call.currency)
                decision = self._decisions.get(t.decision_id or "")
                last = mine[-1] if mine else None
                turn.update(
                    reasoning=t.reasoning,
                    tool_calls=t.tools,
                    model=(last.model if last else None) or (decision or {}).get("model"),
                    profile=(last.profile if last else None) or (decision or {}).get("profile"),
                    routing=explain(decision) if (decision is not None and explain is not None) else None,
                    spend=spend.to_json() if mine else None,
                )
            out.append(turn)
        return out
