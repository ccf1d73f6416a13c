"""Time-of-day billing: DeepSeek charges twice its off-peak rates in its peak hours, so a call
is priced at the rates in force when it started; an unknown start is priced at peak (a budget
stops early, never late), and prices without a schedule hold around the clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from deepseek_ls.config import load_config
from deepseek_ls.config_models import Config, ModelEntry
from deepseek_ls.llm.budget import CostLedger, PeakSchedule, Prices, Tokens, call_cost, price_book_for, price_sessions
from deepseek_ls.llm.trace import CallTrace
from deepseek_ls.store.sessions import SessionStore

UTC = timezone.utc
DEEPSEEK = PeakSchedule.parse(2.0, ["01:00-04:00", "06:00-10:00"], ["mon", "tue", "wed", "thu", "fri"])
MONDAY = datetime(2026, 11, 23, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(
    ("when", "peak"),
    [
        pytest.param(MONDAY.replace(hour=0, minute=59), False, id="before-first-window"),
        pytest.param(MONDAY.replace(hour=1), True, id="first-window-start-inclusive"),
        pytest.param(MONDAY.replace(hour=3, minute=59, second=59), True, id="first-window-last-second"),
        pytest.param(MONDAY.replace(hour=4), False, id="first-window-end-exclusive"),
        pytest.param(MONDAY.replace(hour=5, minute=30), False, id="between-windows"),
        pytest.param(MONDAY.replace(hour=9, minute=59), True, id="second-window"),
        pytest.param(MONDAY.replace(hour=10), False, id="after-second-window"),
        pytest.param(MONDAY + timedelta(days=4, hours=2), True, id="friday"),
        pytest.param(MONDAY + timedelta(days=5, hours=2), False, id="saturday-off-peak"),
        pytest.param(MONDAY + timedelta(days=6, hours=7), False, id="sunday-off-peak"),
        pytest.param(datetime(2026, 11, 23, 10, 30, tzinfo=timezone(timedelta(hours=8))), True,
                     id="beijing-10-30-is-02-30-utc"),
        pytest.param(datetime(2026, 11, 23, 2, 30), True, id="naive-means-utc"),
    ],
)
def test_deepseek_peak_windows(when, peak):
    assert DEEPSEEK.covers(when) is peak


def test_a_window_that_wraps_midnight_belongs_to_the_day_it_starts():
    late = PeakSchedule.parse(2.0, ["22:00-02:00"], ["fri"])
    friday = MONDAY + timedelta(days=4)
    assert late.covers(friday.replace(hour=23)) and late.covers(friday + timedelta(days=1, hours=1))
    assert not late.covers(friday.replace(hour=1))  # Friday's small hours belong to Thursday's window
    assert not late.covers(friday + timedelta(days=1, hours=2))


def test_a_call_is_priced_at_the_rates_in_force_when_it_started():
    prices = Prices(cache_hit=0.003, cache_miss=0.15, output=0.6, peak=DEEPSEEK)
    tokens = Tokens(1_000_000, 1_000_000, 1_000_000)
    off_peak = call_cost(tokens, prices, MONDAY.replace(hour=12))
    assert off_peak == pytest.approx(0.753)
    assert call_cost(tokens, prices, MONDAY.replace(hour=2)) == pytest.approx(2 * off_peak)
    assert call_cost(tokens, prices, None) == pytest.approx(2 * off_peak)  # unknown start: the peak rates
    assert call_cost(tokens, Prices(0.003, 0.15, 0.6), MONDAY.replace(hour=2)) == pytest.approx(off_peak)


def _call(started_at, call_id):
    usage = {"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 1_000_000, "completion_tokens": 0}
    payload = {"call_id": call_id, "role": "executor", "profile": "fast", "model": "deepseek-flash",
               "model_entry": "deepseek-flash", "usage": usage}
    if started_at is not None:
        payload["started_at"] = started_at
    return payload


def test_the_ledger_says_which_calls_ran_at_peak_rates():
    book = price_book_for(Config())
    ledger = CostLedger(book)
    ledger.add(_call("2026-11-23T02:00:00+00:00", "peak"))
    ledger.add(_call("2026-11-23T12:00:00+00:00", "off"))
    ledger.add(_call("2026-11-28T02:00:00+00:00", "saturday"))
    ledger.add(_call(None, "unknown"))
    ledger.add(_call("not a time", "garbled"))
    by_id = {c.call_id: c for c in ledger.calls}
    assert {k: c.rate for k, c in by_id.items()} == {
        "peak": "peak", "off": "off-peak", "saturday": "off-peak", "unknown": "peak", "garbled": "peak"}
    assert by_id["peak"].cost == pytest.approx(0.30) and by_id["off"].cost == pytest.approx(0.15)
    total = ledger.total()
    assert total.peak_calls == 3 and total.cost == pytest.approx(0.15 * 2 + 0.30 * 3)
    assert "(3 of 5 calls at peak rates)" in total.text()
    assert total.to_json()["peak_calls"] == 3 and by_id["off"].to_json()["rate"] == "off-peak"


def test_budget_prices_without_a_schedule_are_flat_around_the_clock(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text('[budget.prices."deepseek-flash"]\ncache_hit = 0.5\ncache_miss = 2.0\noutput = 8.0\n')
    (tmp_path / "ws").mkdir()
    config = load_config(tmp_path / "ws", env={"DEEPSEEK_LS_USER_CONFIG": str(user)}).config
    ledger = CostLedger(price_book_for(config))
    ledger.add(_call("2026-11-23T02:00:00+00:00", "peak-hour"))
    (call,) = ledger.calls
    assert call.rate is None and call.cost == pytest.approx(2.0)


def test_a_users_schedule_is_validated():
    with pytest.raises(ValueError, match="not a window like"):
        ModelEntry(id="x", peak_price_factor=2, peak_hours_utc=["1am-4am"])
    with pytest.raises(ValueError):
        ModelEntry(id="x", peak_price_factor=0.5, peak_hours_utc=["01:00-04:00"])  # a discount is not a peak
    with pytest.raises(ValueError):
        ModelEntry(id="x", peak_days=["monday"])


def test_every_call_records_when_it_started():
    payload = CallTrace(role="executor", profile="fast").payload()
    started = datetime.fromisoformat(payload["started_at"])
    assert started.tzinfo is not None and abs(datetime.now(UTC) - started) < timedelta(minutes=5)


def test_session_listings_price_calls_by_their_start(tmp_path: Path):
    """`sessions` reads calls from the projections: they carry each call's start and registry entry."""
    store = SessionStore(tmp_path / ".deepseek", durable=False)
    with store.create(workspace_root=tmp_path, prompt="p") as log:
        base = {"request_hash": "", "chunks": [], "response": {}}
        log.append("LLMCall@v1", {**base, **_call("2026-11-23T02:00:00+00:00", "a"), "model": "unknown-id"})
        log.append("LLMCall@v1", {**base, **_call("2026-11-23T12:00:00+00:00", "b"), "model": "unknown-id"})
    (summary,) = summaries = store.list()
    price_sessions(summaries, store.llm_calls(), price_book_for(Config()))
    # Priced through the registry entry (the model id is unknown), peak then off-peak: 0.30 + 0.15.
    assert summary.cost["cost"] == pytest.approx(0.45) and summary.cost["peak_calls"] == 1
