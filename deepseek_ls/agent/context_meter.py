"""The context meter: how full the model's window is, folded from a session's events.

The numbers are the ones the request used: `LLMCall@v1` records the fit report
of its prompt (llm/fit.py: tokens after fitting, the window, the budget, what
fills it), so the meter is never a second estimate. It shows the session's
latest prompt, the size its next call starts from, and the compactions made
(`ContextCompacted@v1`, agent/compaction.py). Pure, like `Transcript`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tokens_text(tokens: int) -> str:
    """12345 → "12k", 2100 → "2.1k", 1000000 → "1M"."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.3g}M"
    return f"{tokens / 1000:.1f}k" if tokens < 10_000 else f"{round(tokens / 1000)}k"


def meter_text(meter: Mapping[str, Any] | None) -> str:
    """One line for a prompt or a statusline: "ctx 12k/128k (9%)"; "" before any call."""
    if not meter or not meter.get("window"):
        return ""
    return f"ctx {tokens_text(meter['used'])}/{tokens_text(meter['window'])} ({meter['percent']}%)"


def parts_text(meter: Mapping[str, Any]) -> str:
    """What fills the prompt: "instructions 2.1k, plan 0.4k, conversation 3.0k, tool results 5.5k"."""
    parts = meter.get("parts") or {}
    return ", ".join(f"{name.replace('_', ' ')} {tokens_text(int(n))}" for name, n in parts.items() if n) or "empty"


class ContextMeter:
    """`fold(kind, payload)` takes every event; `view()` is the meter (None before the first fitted call)."""

    def __init__(self) -> None:
        self._last: dict[str, Any] | None = None
        self.compactions: list[dict[str, Any]] = []

    def fold(self, kind: str, p: Mapping[str, Any]) -> None:
        if kind == "LLMCall@v1":
            fit = p.get("fit")
            # The summarizer's own prompt (agent/compaction.py) is not the session's conversation.
            if isinstance(fit, Mapping) and fit.get("window") and p.get("role") != "compactor":
                self._last = {"fit": dict(fit), "role": p.get("role"), "model": p.get("model")}
        elif kind == "ContextCompacted@v1":
            self.compactions.append({k: p.get(k) for k in ("trigger", "tokens_before", "tokens_after", "focus")})

    def view(self) -> dict[str, Any] | None:
        if self._last is None:
            return None
        fit = self._last["fit"]
        used, window = int(fit.get("prompt_tokens") or 0), int(fit["window"])
        meter = {
            "used": used,
            "window": window,
            "budget": fit.get("budget"),
            "percent": round(100 * used / window) if window else 0,
            "parts": dict(fit.get("parts") or {}),
            "shortened": len(fit.get("shortened") or []),  # messages cut to fit (what compaction avoids)
            "exact": bool(fit.get("exact")),
            "role": self._last["role"],
            "model": self._last["model"],
            "compactions": len(self.compactions),
        }
        meter["text"] = meter_text(meter)
        return meter
