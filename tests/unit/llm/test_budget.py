"""`llm.budget`: tokens and money per call, per step and per session; unknown prices stay unknown."""

from __future__ import annotations

import pytest

from deepseek_ls.llm.budget import (
    CostLedger,
    Prices,
    Spend,
    Tokens,
    budget_message,
    call_cost,
    ledger_from_events,
    money,
    over_budget,
    price_book,
)

FLASH = Prices(cache_hit=0.1, cache_miss=1.0, output=2.0)
BOOK = price_book({"deepseek-v4-flash": FLASH})


def call(model="deepseek-v4-flash", hit=0, miss=0, out=0, **extra):
    usage = {"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss, "completion_tokens": out,
             "prompt_tokens": hit + miss}
    return ("LLMCall@v1", {"call_id": f"c{hit}{miss}{out}", "role": "executor", "profile": "fast",
                           "model": model, "usage": usage, **extra})


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param({"prompt_cache_hit_tokens": 3, "prompt_cache_miss_tokens": 7, "completion_tokens": 5},
                     Tokens(3, 7, 5), id="deepseek-fields"),
        pytest.param({"prompt_tokens": 10, "completion_tokens": 2}, Tokens(0, 10, 2), id="no-cache-split"),
        pytest.param({"prompt_tokens": 10, "prompt_cache_hit_tokens": 4, "completion_tokens": None},
                     Tokens(4, 6, 0), id="hit-only-and-null"),
        pytest.param({}, Tokens(), id="missing-usage"),
        pytest.param(None, Tokens(), id="none"),
        pytest.param({"prompt_cache_hit_tokens": -5, "completion_tokens": True}, Tokens(), id="nonsense-values"),
    ],
)
def test_tokens_from_usage(usage, expected):
    assert Tokens.from_usage(usage) == expected


def test_call_cost_is_per_million_tokens():
    assert call_cost(Tokens(1_000_000, 2_000_000, 500_000), FLASH) == pytest.approx(0.1 + 2.0 + 1.0)


def test_unknown_prices_give_unknown_cost_never_zero():
    ledger = ledger_from_events([call(model="my-local-model", miss=100, out=10)], BOOK)
    spend = ledger.total()
    assert spend.known_cost is None
    assert spend.to_json()["cost"] is None and spend.to_json()["tokens"]["total"] == 110
    assert spend.cost_text() == "unknown" and "$0" not in spend.text()


def test_partly_priced_sessions_say_so():
    spend = ledger_from_events([call(miss=1_000_000), call(model="other", miss=5)], BOOK).total()
    assert spend.known_cost == pytest.approx(1.0)
    assert not spend.cost_complete and spend.cost_text() == "$1.00 + unknown"


def test_calls_are_grouped_by_the_step_that_was_running():
    events = [
        call(miss=1000),  # planning, outside any step
        ("StepMarked@v1", {"plan_id": "p", "step_id": "s1", "status": "running"}),
        call(hit=1000, out=100),
        call(hit=2000, out=100),
        ("StepMarked@v1", {"plan_id": "p", "step_id": "s1", "status": "done"}),
        call(miss=10),  # verification recovery planning
        ("StepMarked@v1", {"plan_id": "p", "step_id": "s2", "status": "running"}),
        call(out=50),
    ]
    ledger = ledger_from_events(events, BOOK)
    steps = ledger.by_step()
    assert steps["s1"].tokens == Tokens(3000, 0, 200) and steps["s1"].calls == 2
    assert steps["s2"].tokens == Tokens(0, 0, 50)
    assert ledger.total().calls == 5
    assert [c.step_id for c in ledger.calls] == [None, "s1", "s1", None, "s2"]
    summary = ledger.summary()
    assert summary["session"]["tokens"]["total"] == ledger.total().tokens.total
    assert summary["last_call"]["step_id"] == "s2" and len(summary["calls"]) == 5


def test_prices_set_after_folding_still_apply():
    ledger = CostLedger()
    ledger.fold(*call(miss=1_000_000))
    assert ledger.total().known_cost is None
    ledger.prices = BOOK
    assert ledger.total().known_cost == pytest.approx(1.0)


def test_budget_is_reached_by_known_cost_only():
    priced = ledger_from_events([call(miss=2_000_000)], BOOK).total()
    unpriced = ledger_from_events([call(model="x", miss=2_000_000)], BOOK).total()
    assert over_budget(priced, 2.0) and not over_budget(priced, 2.5) and not over_budget(priced, None)
    assert not over_budget(unpriced, 0.01)
    message = budget_message(priced, 2.0, "0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee")
    assert "max_cost" in message and "deepseek-ls run --session 0190aaaa-bbbb" in message


def test_empty_spend_costs_nothing_known():
    assert Spend().cost_text() == "$0.0000" and Spend().known_cost == 0.0


def test_price_book_from_config_prefers_budget_prices_then_registry():
    from types import SimpleNamespace

    from deepseek_ls.config_models import Config
    from deepseek_ls.llm.budget import price_book_for

    cfg = Config.model_validate({"budget": {"prices": {"m1": {"cache_hit": 1, "cache_miss": 2, "output": 3}}}})
    assert price_book_for(cfg)("m1") == Prices(1.0, 2.0, 3.0)
    assert price_book_for(cfg)("unpriced-model") is None
    # A registry entry (name -> entry with `id` and `price_*` fields) is found by name and by id.
    entry = SimpleNamespace(id="vendor/model-x", price_cache_hit=0.1, price_cache_miss=0.2, price_output=0.3,
                            currency="CNY")
    registry = SimpleNamespace(budget=None, models={"x": entry, "nopr": SimpleNamespace(id="y", price_output=None)})
    book = price_book_for(registry)
    assert book("x") == book("vendor/model-x") == Prices(0.1, 0.2, 0.3, "CNY")
    assert book("y") is None and book("nopr") is None


@pytest.mark.parametrize(
    ("value", "currency", "text"),
    [
        pytest.param(0.0, None, "$0.0000", id="nothing"),
        pytest.param(0.000002, None, "<$0.0001", id="a-tiny-call-is-not-free"),
        pytest.param(0.000049, "CNY", "<¥0.0001", id="tiny-in-yuan"),
        pytest.param(0.00005, None, "$0.0001", id="rounds-up-to-the-first-digit"),
        pytest.param(0.0123, None, "$0.0123", id="cents"),
        pytest.param(2.5, "EUR", "2.50 EUR", id="no-symbol"),
    ],
)
def test_money_never_shows_a_paid_call_as_zero(value, currency, text):
    assert money(value, currency) == text


def test_a_session_of_tiny_calls_says_it_cost_something():
    spend = Spend()
    spend.add(Tokens(0, 10, 1), call_cost(Tokens(0, 10, 1), FLASH), "USD")
    assert spend.cost_text() == "<$0.0001" and spend.known_cost > 0
