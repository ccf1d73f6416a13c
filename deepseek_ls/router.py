"""Automatic max-think: signals → feature vector → score → profile (docs/agent.md, "Router").

``S = Σ wᵢ·fᵢ`` over features in 0..1; ``S ≥ threshold_high`` selects the
`max_think` profile. The planner is more likely to get max-think than the
executor (a planner bias and planning keywords count for planner calls only);
repeated/design failures push the next call towards it. One automatic
escalation retry per LLM call unit. A per-session max-think budget (tokens and
seconds from the `max_think` profile) keeps the fast profile once spent, and
the decision says so. Every decision is a `RouterDecision@v1` event that
`explain()` renders for the hover.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from deepseek_ls.config_models import ModelProfile, RouterConfig
from deepseek_ls.sink import EventSink, NullSink
from deepseek_ls.store import events
from deepseek_ls.store.ids import new_id

Profile = Literal["fast", "max_think"]

CONSTRAINT_WORDS_EN = (
    "must", "must not", "guarantee", "guaranteed", "deterministic", "ensure", "never", "always",
    "exactly", "strictly", "invariant", "atomic", "idempotent", "thread-safe", "concurrent",
    "race", "backward compatible", "backwards compatible", "without breaking", "at most",
    "at least", "should not", "required", "consistent",
)
CONSTRAINT_WORDS_ZH = (
    "必须", "保证", "确保", "确定性", "不能", "不得", "一定", "严格", "始终", "兼容", "原子", "幂等",
    "并发", "一致", "至少", "至多",
)
PLANNING_WORDS_EN = (
    "design", "architecture", "architect", "rfc", "state machine", "state machines", "guarantees",
    "refactor", "migrate", "migration", "decompose", "multi-step", "trade-off", "tradeoffs",
    "compare", "evaluate", "dependencies", "milestone", "milestones", "workflow", "plan",
)
PLANNING_WORDS_ZH = (
    "计划", "规划", "分解", "多步骤", "调研", "写方案", "评估", "对比", "流程", "依赖", "里程碑",
    "设计", "架构", "状态机", "重构", "迁移",
)
AMBIGUITY_WORDS = ("maybe", "not sure", "somehow", "something like", "或者", "不确定", "可能", "大概")

_CJK = re.compile(r"[\u3400-\u9fff]")
_STRUCTURE = re.compile(r"(?m)^\s*(?:\d+[.)、]|[-*•])\s+|->|→|=>")
_PATHLIKE = re.compile(r"\b[\w./-]+\.(?:py|rs|ts|tsx|js|go|lua|toml|json|md|c|h|cpp|java|rb|yml|yaml)\b")


def _count_words(text: str, words: tuple[str, ...]) -> int:
    lower = text.lower()
    total = 0
    for w in words:
        if w not in lower:  # a substring search first: the regex tries every position (15 s on 10 MB)
            continue
        if _CJK.search(w):
            total += lower.count(w)
        else:
            total += len(re.findall(rf"(?<![\w-]){re.escape(w)}(?![\w-])", lower))
    return total


@dataclass
class RouterSignals:
    """What the router knows about one LLM call unit."""

    prompt: str = ""
    role: str = "executor"
    files_touched: int = 0
    index_hit_files: int = 0  # top-level areas (directories) the index hits span
    failure_streak: int = 0
    verification_failures: int = 0
    planner_confidence: float | None = None
    unresolved_questions: int = 0
    failure_class: str | None = None
    latency_mode: Literal["interactive", "batch"] = "interactive"
    override: Profile | None = None
    # Review calls (agent/review.py): the lines the call's diff changes, and the risk areas it touches.
    diff_lines: int = 0
    risk_areas: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class RouterDecision(events.RouterDecision):
    """`RouterDecision@v1` plus the raw signals and budget note that `explain()` reads."""

    signals: dict[str, Any] = {}
    budget_note: str = ""
    budget: dict[str, Any] = {}  # max-think spent so far in the session, and its caps


@dataclass
class MaxThinkBudget:
    """Tokens and seconds spent on max-think in one session, against the profile's caps."""

    max_tokens: int | None
    max_seconds: float | None
    tokens: int = 0
    seconds: float = 0.0

    def spend(self, tokens: int, seconds: float) -> None:
        self.tokens += max(0, int(tokens))
        self.seconds += max(0.0, float(seconds))

    @property
    def exhausted(self) -> bool:
        return (self.max_tokens is not None and self.tokens >= self.max_tokens) or (
            self.max_seconds is not None and self.seconds >= self.max_seconds
        )

    def snapshot(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "seconds": round(self.seconds, 3),
                "max_tokens": self.max_tokens, "max_seconds": self.max_seconds}

    def note(self) -> str:
        parts = []
        if self.max_tokens is not None:
            parts.append(f"{self.tokens}/{self.max_tokens} tokens")
        if self.max_seconds is not None:
            parts.append(f"{self.seconds:.0f}/{self.max_seconds:.0f} s")
        return ", ".join(parts)


class Router:
    """Decides fast vs max-think per LLM call unit. One instance per session (it holds the budget)."""

    def __init__(
        self,
        config: RouterConfig,
        profiles: Mapping[str, ModelProfile],
        *,
        sink: EventSink | None = None,
        budget: MaxThinkBudget | None = None,
    ) -> None:
        self.config = config
        self.profiles = profiles
        self.sink = sink or NullSink()
        mt = profiles["max_think"]
        self.budget = budget or MaxThinkBudget(mt.max_tokens_per_session, mt.max_seconds_per_session)
        self._escalations: dict[str, int] = {}

    # -- features ------------------------------------------------------------

    def features(self, s: RouterSignals) -> dict[str, float]:
        prompt = s.prompt or ""
        words = len(re.findall(r"[A-Za-z0-9_]+", prompt))
        cjk = len(_CJK.findall(prompt))
        size = max(min(1.0, words / 200), min(1.0, cjk / 80))
        constraints = _count_words(prompt, CONSTRAINT_WORDS_EN) + _count_words(prompt, CONSTRAINT_WORDS_ZH)
        structure = len(_STRUCTURE.findall(prompt))
        prompt_complexity = 0.4 * size + 0.4 * min(1.0, constraints / 3) + 0.2 * min(1.0, structure / 3)
        k = self.config.breadth_files_k
        mentioned = len(set(_PATHLIKE.findall(prompt)))
        files = max(s.files_touched, mentioned)
        breadth = max(min(1.0, files / k), min(1.0, s.index_hit_files / k))
        conf = s.planner_confidence
        low_conf = 0.0 if conf is None else min(1.0, max(0.0, (0.8 - conf) / 0.5))
        ambiguity_marks = _count_words(prompt, AMBIGUITY_WORDS)
        planning = _count_words(prompt, PLANNING_WORDS_EN) + _count_words(prompt, PLANNING_WORDS_ZH)
        is_planner = s.role == "planner"
        return {
            "prompt_complexity": round(prompt_complexity, 4),
            "repo_breadth": round(breadth, 4),
            "failure_streak": min(1.0, s.failure_streak / 2),
            "verification_failures": min(1.0, s.verification_failures / 2),
            "low_confidence": round(low_conf, 4),
            "ambiguity": min(1.0, (s.unresolved_questions + ambiguity_marks) / 2),
            "planning_request": min(1.0, planning / 2) if is_planner else 0.0,
            "failure_escalation": 1.0 if s.failure_class in ("RepeatedVerifyFailure", "DesignMismatch") else 0.0,
            "batch_mode": 1.0 if s.latency_mode == "batch" else 0.0,
            "planner_role": 1.0 if is_planner else 0.0,
            "review_size": round(min(1.0, s.diff_lines / self.config.review_size_lines), 4),
            "review_risk": min(1.0, len(set(s.risk_areas)) / 2),
        }

    def weights(self) -> dict[str, float]:
        w = self.config.weights.model_dump()
        w["planner_role"] = self.config.planner_bias
        return w

    # -- decisions -------------------------------------------------------------

    def decide(self, signals: RouterSignals, *, unit: str | None = None) -> RouterDecision:
        """Score the signals, pick a profile, emit `RouterDecision@v1`."""
        unit = unit or signals.role
        features = self.features(signals)
        weights = self.weights()
        contributions = {k: round(weights.get(k, 0.0) * v, 4) for k, v in features.items()}
        score = round(sum(contributions.values()), 4)
        threshold = self.config.threshold_high
        codes = [_CODES[k] for k, v in contributions.items() if v > 0]
        profile: Profile
        note = ""
        override = signals.override or self.config.force_profile
        if override:
            profile = override
            codes.append("FORCED_BY_REQUEST" if signals.override else "FORCED_BY_CONFIG")
        elif not self.config.auto_max_think:
            profile = "fast"
            codes.append("AUTO_MAX_THINK_OFF")
        elif score >= threshold:
            if self.budget.exhausted:
                profile = "fast"
                codes.append("MAX_THINK_BUDGET_EXHAUSTED")
                note = f"max-think budget spent ({self.budget.note()}); staying on fast"
            else:
                profile = "max_think"
                codes.append("SCORE_ABOVE_THRESHOLD")
        else:
            profile = "fast"
            codes.append("SCORE_BELOW_THRESHOLD")
        return self._emit(
            RouterDecision(
                decision_id=new_id(),
                unit=unit,
                role=signals.role,
                features=features,
                weights=weights,
                contributions=contributions,
                score=score,
                threshold=threshold,
                reason_codes=codes,
                profile=profile,
                model=self.profiles[profile].model,
                escalation=False,
                signals=_raw_signals(signals),
                budget_note=note,
                budget=self.budget.snapshot(),
            )
        )

    def escalate(self, previous: RouterDecision, reason_code: str) -> RouterDecision | None:
        """The one automatic retry of a call unit on max-think, or None when not allowed.

        Not allowed when the unit already escalated `max_escalations_per_unit`
        times, when it already ran on max-think, when auto max-think is off or
        forced, or when the budget is spent.
        """
        cfg = self.config
        if previous.profile == "max_think" or not cfg.auto_max_think or cfg.force_profile:
            return None
        if "FORCED_BY_REQUEST" in previous.reason_codes:
            return None
        if reason_code == "INVALID_PLAN" and not cfg.escalate_on_invalid_plan:
            return None
        if self._escalations.get(previous.unit, 0) >= cfg.max_escalations_per_unit:
            return None
        if self.budget.exhausted:
            return None
        self._escalations[previous.unit] = self._escalations.get(previous.unit, 0) + 1
        decision = previous.model_copy(
            update={
                "decision_id": new_id(),
                "profile": "max_think",
                "model": self.profiles["max_think"].model,
                "escalation": True,
                "reason_codes": [*previous.reason_codes, reason_code, "ESCALATED"],
            }
        )
        self.sink.emit(
            "RouterEscalation@v1",
            events.RouterEscalation(
                decision_id=decision.decision_id,
                from_profile=previous.profile,
                to_profile="max_think",
                reason_codes=[reason_code],
            ).model_dump(mode="json"),
        )
        return self._emit(decision)

    def record_usage(self, profile: str, tokens: int, seconds: float) -> None:
        """Count a finished call against the max-think budget."""
        if profile == "max_think":
            self.budget.spend(tokens, seconds)

    def restore(self, past_events: list[Mapping[str, Any]]) -> None:
        """Rebuild budget and escalation counts from a session's events (resume)."""
        for ev in past_events:
            kind, payload = ev["kind"], ev["payload"]
            if kind == "LLMCall@v1" and payload.get("profile") == "max_think":
                usage = payload.get("usage") or {}
                self.budget.spend(usage.get("total_tokens", 0), (payload.get("total_ms") or 0) / 1000)
            elif kind == "RouterDecision@v1" and payload.get("escalation"):
                unit = payload.get("unit", "")
                self._escalations[unit] = self._escalations.get(unit, 0) + 1

    def _emit(self, decision: RouterDecision) -> RouterDecision:
        self.sink.emit("RouterDecision@v1", decision.model_dump(mode="json"))
        return decision


_CODES = {
    "prompt_complexity": "PROMPT_COMPLEX",
    "repo_breadth": "MULTI_FILE",
    "failure_streak": "FAILURE_STREAK",
    "verification_failures": "VERIFY_FAILURES",
    "low_confidence": "LOW_CONFIDENCE",
    "ambiguity": "AMBIGUOUS",
    "planning_request": "PLANNING_KEYWORDS",
    "failure_escalation": "REPEATED_FAILURE",
    "batch_mode": "BATCH_MODE",
    "planner_role": "PLANNER_BIAS",
    "review_size": "LARGE_DIFF",
    "review_risk": "RISKY_CHANGE",
}


def _raw_signals(s: RouterSignals) -> dict[str, Any]:
    return {
        "prompt_chars": len(s.prompt or ""),
        "files_touched": max(s.files_touched, len(set(_PATHLIKE.findall(s.prompt or "")))),
        "index_hit_files": s.index_hit_files,
        "failure_streak": s.failure_streak,
        "verification_failures": s.verification_failures,
        "planner_confidence": s.planner_confidence,
        "unresolved_questions": s.unresolved_questions,
        "failure_class": s.failure_class,
        "diff_lines": s.diff_lines,
        "risk_areas": sorted(set(s.risk_areas)),
    }


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _label(feature: str, sig: Mapping[str, Any]) -> str:
    files = sig.get("files_touched", 0)
    return {
        "prompt_complexity": "complex request",
        "repo_breadth": f"{files} file{'s' if files != 1 else ''} touched"
        if files
        else f"index hits span {sig.get('index_hit_files', 0)} areas",
        "failure_streak": f"tool/patch failed {_times(sig.get('failure_streak', 0))}",
        "verification_failures": f"test failed {_times(sig.get('verification_failures', 0))}",
        "low_confidence": f"planner confidence {sig.get('planner_confidence')}",
        "ambiguity": "ambiguous request",
        "planning_request": "design/planning request",
        "failure_escalation": f"{sig.get('failure_class') or 'repeated failure'}",
        "batch_mode": "batch mode",
        "planner_role": "planner call",
        "review_size": f"{sig.get('diff_lines', 0)} changed lines",
        "review_risk": f"touches {', '.join(sig.get('risk_areas') or []) or 'risky code'}",
    }.get(feature, feature)


def explain(decision: RouterDecision | Mapping[str, Any]) -> str:
    """A one-line human explanation, e.g.
    "max-think: 3 files touched (+0.24), test failed twice (+0.30), score 0.81 ≥ 0.72"."""
    d = decision.model_dump() if hasattr(decision, "model_dump") else dict(decision)
    name = "max-think" if d["profile"] == "max_think" else "fast"
    codes = d.get("reason_codes", [])
    sig = d.get("signals") or {}
    ranked = sorted(((v, k) for k, v in d.get("contributions", {}).items() if v >= 0.005), reverse=True)
    parts = [f"{_label(k, sig)} (+{v:.2f})" for v, k in ranked]
    cmp = "≥" if d["score"] >= d["threshold"] else "<"
    tail = f"score {d['score']:.2f} {cmp} {d['threshold']:.2f}"
    if "FORCED_BY_REQUEST" in codes or "FORCED_BY_CONFIG" in codes:
        who = "request" if "FORCED_BY_REQUEST" in codes else "config"
        return f"{name}: forced by {who} ({tail})"
    if "AUTO_MAX_THINK_OFF" in codes:
        return f"fast: auto max-think is off ({tail})"
    if "MAX_THINK_BUDGET_EXHAUSTED" in codes:
        return f"fast: {d.get('budget_note') or 'max-think budget spent'}; " + ", ".join([*parts, tail])
    prefix = f"{name} (escalated after {codes[-2] if len(codes) >= 2 else 'failure'})" if d.get("escalation") else name
    return f"{prefix}: " + ", ".join([*parts, tail])
