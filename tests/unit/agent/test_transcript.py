"""The conversation folded from a session's events (agent/transcript.py)."""

from __future__ import annotations

from deepseek_ls.agent.transcript import Transcript
from deepseek_ls.llm.budget import CostLedger, Prices, price_book


def decision(decision_id: str, profile: str = "fast") -> dict:
    return {"decision_id": decision_id, "unit": "planner", "role": "planner", "profile": profile, "model": "m-" + profile,
            "score": 0.1, "threshold": 0.7, "contributions": {}, "reason_codes": [], "features": {}, "weights": {}}


def call(call_id: str, model: str, hit: int, miss: int, out: int) -> dict:
    return {"call_id": call_id, "role": "planner", "profile": "fast", "model": model, "request_hash": "h",
            "usage": {"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss, "completion_tokens": out}}


def folded(events: list[tuple[str, dict]]) -> tuple[Transcript, CostLedger]:
    transcript = Transcript()
    ledger = CostLedger(price_book({"m-fast": Prices(0.1, 1.0, 2.0)}))
    for kind, payload in events:
        transcript.fold(kind, payload)
        ledger.fold(kind, payload)
    return transcript, ledger


def test_an_answer_carries_every_call_made_for_it_and_its_routing():
    transcript, ledger = folded([
        ("TurnAdded@v1", {"role": "user", "content": "fix it", "agent_role": "planner"}),
        ("RouterDecision@v1", decision("d1")),
        ("LLMCall@v1", call("c1", "m-fast", 0, 1000, 10)),
        ("LLMCall@v1", call("c2", "m-fast", 1000, 0, 20)),  # a continuation of the same answer
        ("TurnAdded@v1", {"role": "assistant", "content": "plan", "reasoning_content": "hmm",
                          "agent_role": "planner", "decision_id": "d1"}),
    ])
    user, answer = transcript.turns(ledger.calls, lambda d: {"text": f"why {d['decision_id']}"})
    assert user["content"] == "fix it" and "spend" not in user
    assert answer["reasoning"] == "hmm" and answer["model"] == "m-fast" and answer["routing"] == {"text": "why d1"}
    assert answer["spend"]["calls"] == 2
    assert answer["spend"]["tokens"] == {"cache_hit": 1000, "cache_miss": 1000, "output": 30, "total": 2030}
    assert answer["spend"]["cost"] == round((1000 * 0.1 + 1000 * 1.0 + 30 * 2.0) / 1e6, 6)


def test_our_own_prompts_to_the_executor_are_not_shown_as_the_persons():
    transcript, ledger = folded([
        ("StepMarked@v1", {"plan_id": "p", "step_id": "s1", "status": "running"}),
        ("TurnAdded@v1", {"role": "user", "content": "internal executor prompt", "agent_role": "executor"}),
        ("LLMCall@v1", call("c1", "unpriced-model", 0, 5, 5)),
        ("TurnAdded@v1", {"role": "assistant", "content": "```diff\n```", "agent_role": "executor"}),
    ])
    (answer,) = transcript.turns(ledger.calls)
    assert answer["step_id"] == "s1" and answer["routing"] is None
    assert answer["spend"]["cost"] is None and answer["spend"]["unpriced_calls"] == 1  # unknown, never 0
    assert transcript.size == 1


def test_a_failed_call_without_an_answer_is_counted_with_the_next_answer():
    transcript, ledger = folded([
        ("LLMCall@v1", {**call("c1", "m-fast", 0, 0, 0), "error": "timeout"}),
        ("LLMCall@v1", call("c2", "m-fast", 0, 100, 1)),
        ("TurnAdded@v1", {"role": "assistant", "content": "ok", "agent_role": "ask"}),
        ("TurnAdded@v1", {"role": "assistant", "content": "", "agent_role": "ask"}),
    ])
    first, second = transcript.turns(ledger.calls)
    assert first["spend"]["calls"] == 2
    assert second["spend"] is None  # no call of its own
