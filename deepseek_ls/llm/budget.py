"""What model calls cost: tokens (cache hit / cache miss / output) and money, per call, per step, per session.

Pure: fed with `LLMCall@v1` payloads (and the `StepMarked@v1` events that say which
step was running), priced with a `PriceBook` (model id -> `Prices` per 1M tokens).
A model without prices keeps its tokens and has an *unknown* cost: never a made-up 0.
The session's `Spend` is checked against a `max_cost` budget by the agent.

Prices may depend on the time of day (DeepSeek bills twice its off-peak rates in its
peak hours): a call is priced at the rates in force when it started (`started_at`
in its payload); a call whose start is unknown is priced at the peak rates, so a
budget stops early rather than late.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

PER_TOKENS = 1_000_000
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass(frozen=True, slots=True)
class PeakSchedule:
    """When the peak rates apply: `windows` in minutes after 00:00 UTC (start inclusive, end
    exclusive; a window may wrap past midnight and then belongs to the day it starts on),
    on the weekdays in `days` (0 = Monday), at `factor` times the base prices."""

    factor: float
    windows: tuple[tuple[int, int], ...]
    days: frozenset[int] = frozenset(range(7))

    @classmethod
    def parse(cls, factor: float, hours_utc: Sequence[str], days: Sequence[str] = _DAYS) -> "PeakSchedule":
        """From config values: windows like '01:00-04:00' and days like 'mon' (validated by the config)."""
        windows = tuple(tuple(_minutes(clock) for clock in w.split("-")) for w in hours_utc)
        return cls(float(factor), windows, frozenset(_DAYS.index(d) for d in days))  # type: ignore[arg-type]

    def covers(self, when: datetime) -> bool:
        """Whether `when` (an aware datetime; naive means UTC) falls in a peak window."""
        when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
        minute, day = when.hour * 60 + when.minute, when.weekday()
        for start, end in self.windows:
            if start == end:  # the whole day
                inside, starts_on = True, day
            elif start < end:
                inside, starts_on = start <= minute < end, day
            elif minute >= start:  # wraps midnight: the evening part
                inside, starts_on = True, day
            else:  # the morning part belongs to the day before
                inside, starts_on = minute < end, (day - 1) % 7
            if inside and starts_on in self.days:
                return True
        return False

    def describe(self) -> str:
        """'2× on mon-fri 01:00-04:00, 06:00-10:00 UTC'."""
        days = ",".join(_DAYS[d] for d in sorted(self.days))
        if self.days == frozenset(range(5)):
            days = "mon-fri"
        elif self.days == frozenset(range(7)):
            days = "every day"
        hours = ", ".join(f"{_clock(a)}-{_clock(b)}" for a, b in self.windows)
        return f"{self.factor:g}× on {days} {hours} UTC"


def _minutes(clock: str) -> int:
    hours, minutes = clock.strip().split(":")
    return int(hours) * 60 + int(minutes)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True, slots=True)
class Prices:
    """Price per 1M tokens: prompt tokens served from the cache, the rest of the prompt, output.

    With a `peak` schedule these are the off-peak rates and `at(when)` gives the rates in force.
    """

    cache_hit: float
    cache_miss: float
    output: float
    currency: str = "USD"
    peak: PeakSchedule | None = None

    def at(self, when: datetime | None) -> tuple["Prices", str | None]:
        """The flat rates in force at `when` and which they are: 'peak', 'off-peak', or None
        (prices without a schedule). An unknown `when` gets the peak rates."""
        if self.peak is None:
            return self, None
        if when is not None and not self.peak.covers(when):
            return replace(self, peak=None), "off-peak"
        f = self.peak.factor
        return replace(self, cache_hit=self.cache_hit * f, cache_miss=self.cache_miss * f,
                       output=self.output * f, peak=None), "peak"


PriceBook = Callable[[str], "Prices | None"]


def no_prices(model: str) -> Prices | None:
    """The price book that knows nothing: every cost is unknown."""
    return None


def price_book(table: Mapping[str, Prices]) -> PriceBook:
    """A price book from a model id -> `Prices` table."""
    return lambda model: table.get(model)


@dataclass(frozen=True, slots=True)
class Tokens:
    cache_hit: int = 0
    cache_miss: int = 0
    output: int = 0

    @classmethod
    def from_usage(cls, usage: Mapping[str, Any] | None) -> "Tokens":
        """DeepSeek's usage fields; a server that reports no cache split counts the prompt as missed."""
        usage = usage or {}
        hit = _count(usage.get("prompt_cache_hit_tokens"))
        miss = usage.get("prompt_cache_miss_tokens")
        miss = _count(miss) if miss is not None else max(_count(usage.get("prompt_tokens")) - hit, 0)
        return cls(cache_hit=hit, cache_miss=miss, output=_count(usage.get("completion_tokens")))

    @property
    def prompt(self) -> int:
        return self.cache_hit + self.cache_miss

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def __add__(self, other: "Tokens") -> "Tokens":
        return Tokens(self.cache_hit + other.cache_hit, self.cache_miss + other.cache_miss, self.output + other.output)

    def to_json(self) -> dict[str, int]:
        return {"cache_hit": self.cache_hit, "cache_miss": self.cache_miss, "output": self.output, "total": self.total}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def call_cost(tokens: Tokens, prices: Prices | None, when: datetime | None = None) -> float | None:
    """Money for one call's tokens at the rates in force at `when`; None when the model's prices are unknown."""
    if prices is None:
        return None
    prices, _ = prices.at(when)
    return (
        tokens.cache_hit * prices.cache_hit + tokens.cache_miss * prices.cache_miss + tokens.output * prices.output
    ) / PER_TOKENS


@dataclass
class Spend:
    """Tokens and money of some calls. `cost` sums the calls with known prices; `unpriced` counts the others."""

    tokens: Tokens = field(default_factory=Tokens)
    cost: float = 0.0
    calls: int = 0
    unpriced: int = 0
    currency: str | None = None
    peak_calls: int = 0  # calls priced at peak rates (time-of-day billing)

    def add(self, tokens: Tokens, cost: float | None, currency: str | None, rate: str | None = None) -> None:
        self.tokens = self.tokens + tokens
        self.calls += 1
        self.peak_calls += rate == "peak"
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost
            self.currency = self.currency or currency

    @property
    def known_cost(self) -> float | None:
        """The money spent, or None when no call of this spend had prices."""
        return None if self.calls and self.unpriced == self.calls else self.cost

    @property
    def cost_complete(self) -> bool:
        return self.unpriced == 0

    def cost_text(self) -> str:
        """'$0.0123', 'unknown', or '$0.0123 + unknown' when some calls had no prices."""
        if self.calls == 0:
            return money(0.0, self.currency)
        if self.known_cost is None:
            return "unknown"
        text = money(self.cost, self.currency)
        return text if self.cost_complete else f"{text} + unknown"

    def text(self) -> str:
        """One line: tokens by kind and the cost."""
        t = self.tokens
        peak = f" ({self.peak_calls} of {self.calls} calls at peak rates)" if self.peak_calls else ""
        return (f"{_k(t.prompt)} in ({_k(t.cache_hit)} cached, {_k(t.cache_miss)} missed), "
                f"{_k(t.output)} out · {self.cost_text()}{peak}")

    def short(self) -> str:
        """A few characters for a status line: '2.9k tok · $0.0048' / '2.9k tok · cost unknown'."""
        cost = self.cost_text()
        return f"{_k(self.tokens.total)} tok · {'cost unknown' if cost == 'unknown' else cost}"

    def to_json(self) -> dict[str, Any]:
        return {
            "short": self.short(),
            "tokens": self.tokens.to_json(),
            "cost": None if self.known_cost is None else round(self.cost, 6),
            "cost_complete": self.cost_complete,
            "currency": self.currency,
            "calls": self.calls,
            "unpriced_calls": self.unpriced,
            "peak_calls": self.peak_calls,
            "text": self.text(),
        }


def money(value: float, currency: str | None = None) -> str:
    """'$0.0123', '$1.50'; a spend too small for four decimals is '<$0.0001', never '$0.0000'."""
    symbol = {"USD": "$", "CNY": "¥", None: "$"}.get(currency)
    digits = 4 if value < 1 else 2
    tiny = 0 < value < 0.00005
    amount = f"{0.0001 if tiny else value:.{digits}f}"
    text = f"{symbol}{amount}" if symbol else f"{amount} {currency}"
    return f"<{text}" if tiny else text


def _k(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


@dataclass(frozen=True, slots=True)
class CallCost:
    call_id: str
    role: str
    profile: str
    model: str
    step_id: str | None
    tokens: Tokens
    cost: float | None
    currency: str | None
    error: str | None = None
    rate: str | None = None  # 'peak' / 'off-peak' under time-of-day billing, else None
    started_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id, "role": self.role, "profile": self.profile, "model": self.model,
            "step_id": self.step_id, "tokens": self.tokens.to_json(),
            "cost": None if self.cost is None else round(self.cost, 6), "currency": self.currency,
            "rate": self.rate, "started_at": self.started_at, "error": self.error,
        }


class CostLedger:
    """Every call of one session; folded from the session's events in order, priced when read.

    `fold(kind, payload)` takes any event: `StepMarked@v1` (running) says which step the
    following calls belong to; `LLMCall@v1` adds a call; `LedgerCharged@v1` adds a call one of
    the session's teammate lanes made, to the lane's step. Calls outside a step (planning,
    `ask`) have `step_id` None. Prices are applied when a view is made, so a ledger folded
    before its price book was set is priced all the same.
    """

    def __init__(self, prices: PriceBook = no_prices) -> None:
        self.prices = prices
        self._calls: list[tuple[dict[str, Any], str | None, Tokens]] = []
        self._step: str | None = None

    def fold(self, kind: str, payload: Mapping[str, Any]) -> None:
        if kind == "StepMarked@v1":
            if payload.get("status") == "running":
                self._step = payload.get("step_id")
            elif payload.get("step_id") == self._step:
                self._step = None
        elif kind == "LLMCall@v1":
            self.add(payload, step_id=self._step)
        elif kind == "LedgerCharged@v1":  # a teammate lane's call, charged to its session (agent/ledger.py)
            self.add(payload.get("call") or {}, step_id=payload.get("step_id"))

    def add(self, payload: Mapping[str, Any], *, step_id: str | None = None) -> None:
        keep = {k: payload.get(k) for k in ("call_id", "role", "profile", "model", "model_entry", "error",
                                            "started_at")}
        self._calls.append((keep, step_id, Tokens.from_usage(payload.get("usage"))))

    @property
    def calls(self) -> list[CallCost]:
        out = []
        for p, step_id, tokens in self._calls:
            model = str(p.get("model") or "")
            # By the model id sent (`budget.prices` first, then the registry), else by the registry entry used.
            entry = str(p.get("model_entry") or "")
            prices = (self.prices(model) if model else None) or (self.prices(entry) if entry else None)
            started = _when(p.get("started_at"))
            rates, rate = prices.at(started) if prices else (None, None)
            out.append(CallCost(
                call_id=str(p.get("call_id") or ""), role=str(p.get("role") or ""),
                profile=str(p.get("profile") or ""), model=model, step_id=step_id, tokens=tokens,
                cost=call_cost(tokens, rates), currency=prices.currency if prices else None,
                error=p.get("error"), rate=rate, started_at=started.isoformat() if started else None,
            ))
        return out

    def total(self) -> Spend:
        return _spend(self.calls)

    def by_step(self) -> dict[str, Spend]:
        steps: dict[str, list[CallCost]] = {}
        for call in self.calls:
            if call.step_id is not None:
                steps.setdefault(call.step_id, []).append(call)
        return {step: _spend(calls) for step, calls in steps.items()}

    def step(self, step_id: str) -> Spend:
        return _spend(c for c in self.calls if c.step_id == step_id)

    def summary(self, *, calls: bool = True) -> dict[str, Any]:
        """JSON for status, `replay --json`, hovers: the session total, each step, the last call (and each call)."""
        priced = self.calls
        steps: dict[str, list[CallCost]] = {}
        for call in priced:
            if call.step_id is not None:
                steps.setdefault(call.step_id, []).append(call)
        out: dict[str, Any] = {
            "session": _spend(priced).to_json(),
            "steps": {step: _spend(items).to_json() for step, items in steps.items()},
            "last_call": priced[-1].to_json() if priced else None,
        }
        if calls:
            out["calls"] = [c.to_json() for c in priced]
        return out


def _spend(calls: Iterable[CallCost]) -> Spend:
    spend = Spend()
    for call in calls:
        spend.add(call.tokens, call.cost, call.currency, call.rate)
    return spend


def _when(value: Any) -> datetime | None:
    """A call's recorded start (ISO 8601; naive means UTC), or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when


def ledger_from_events(events: Iterable[tuple[str, Mapping[str, Any]]], prices: PriceBook = no_prices) -> CostLedger:
    """A ledger folded from `(kind, payload)` pairs in log order."""
    ledger = CostLedger(prices)
    for kind, payload in events:
        ledger.fold(kind, payload)
    return ledger


def price_sessions(summaries: Iterable[Any], calls: Iterable[Mapping[str, Any]], prices: PriceBook) -> None:
    """Set each listed session's `cost` (`Spend.to_json()`) from its model calls
    (`SessionStore.llm_calls()`), at `prices`."""
    ledgers: dict[str, CostLedger] = {}
    for call in calls:
        ledgers.setdefault(call["session_id"], CostLedger(prices)).add(call)
    for summary in summaries:
        summary.cost = ledgers.get(summary.session_id, CostLedger(prices)).total().to_json()


def over_budget(spend: Spend, max_cost: float | None) -> bool:
    """True when the known cost reached `max_cost` (unknown costs cannot count towards it)."""
    return max_cost is not None and spend.known_cost is not None and spend.cost >= max_cost


def budget_message(spend: Spend, max_cost: float, session_id: str) -> str:
    return (
        f"cost budget reached: this session spent {spend.cost_text()} of max_cost {money(max_cost, spend.currency)} "
        f"({spend.text()}); raise budget.max_cost and resume with: deepseek-ls run --session {session_id[:13]}"
    )


def price_book_for(config: Any) -> PriceBook:
    """The price book of a `Config`: `budget.prices` by model id, then the model registry's prices.

    A registry entry is found by its name or by the model id it sends; entries without all
    three prices are unknown. A model priced nowhere has an unknown cost.
    """
    table: dict[str, Prices] = {}
    budget = getattr(config, "budget", None)
    for model, entry in (getattr(budget, "prices", None) or {}).items():
        prices = _entry_prices(entry)
        if prices is not None:
            table[str(model)] = prices
    registry = getattr(config, "models", None) or getattr(getattr(config, "llm", None), "models", None) or {}
    for name, entry in dict(registry).items():
        prices = _entry_prices(entry)
        if prices is not None:
            table.setdefault(str(getattr(entry, "id", None) or name), prices)
            table.setdefault(str(name), prices)
    return price_book(table) if table else no_prices


def _entry_prices(entry: Any) -> Prices | None:
    source = getattr(entry, "prices", None) or entry
    values = [_first(source, key, f"price_{key}") for key in ("cache_hit", "cache_miss", "output")]
    if any(not isinstance(v, (int, float)) for v in values):
        return None
    currency = _first(source, "currency") or "USD"
    factor, hours = _first(source, "peak_price_factor"), _first(source, "peak_hours_utc")
    peak = None
    if isinstance(factor, (int, float)) and factor != 1 and hours:
        peak = PeakSchedule.parse(factor, hours, _first(source, "peak_days") or _DAYS)
    return Prices(float(values[0]), float(values[1]), float(values[2]), str(currency), peak)  # type: ignore[arg-type]


def _first(source: Any, *keys: str) -> Any:
    """The first of `keys` that `source` (a model or a mapping) has a value for."""
    for key in keys:
        value = source.get(key) if isinstance(source, Mapping) else getattr(source, key, None)
        if value is not None:
            return value
    return None
