"""Bounded retries with exponential backoff and jitter (tenacity), honouring Retry-After.

Only `LLMError`s marked `retryable` are retried (connect errors and timeouts
before any data, 429, 500/502/503/504). A server's `Retry-After` /
`retry-after-ms` replaces the computed wait, capped at `retry_max_seconds`.
No attempt starts (and no wait is begun) that would pass the call's retry
budget (`retry_budget_seconds`): a server that stalls before its first token
costs at most that, not `max_retries + 1` first-token timeouts.
"""

from __future__ import annotations

import logging
import math
import time
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter
from tenacity.stop import stop_base

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm.errors import LLMError

log = logging.getLogger("deepseek_ls.llm")


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date).

    Whatever a server sends, the answer is a finite number of seconds >= 0 or None:
    `nan` or `inf` would make the wait never end (an asyncio sleep of nan), so they count as absent.
    """
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError, OverflowError):
        return None


def _seconds(value: str | None) -> float | None:
    try:
        number = float(value) if value else None
    except ValueError:
        return None
    return max(number, 0.0) if number is not None and math.isfinite(number) else None


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, LLMError) and exc.retryable


class _Wait:
    """Exponential backoff with jitter, unless the server said how long to wait."""

    def __init__(self, config: LLMConfig) -> None:
        self._cap = config.retry_max_seconds
        self._backoff = wait_exponential_jitter(
            multiplier=config.retry_base_seconds, max=config.retry_max_seconds, jitter=config.retry_base_seconds
        )

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, LLMError) and exc.retry_after is not None:
            return min(exc.retry_after, self._cap)
        return self._backoff(state)


class _StopPast(stop_base):
    """Stop when the next attempt would start at or after `deadline` (`time.monotonic()`)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def __call__(self, retry_state: RetryCallState) -> bool:
        return time.monotonic() + retry_state.upcoming_sleep >= self.deadline


def retrying(
    config: LLMConfig, *, role: str, on_retry: Callable[[BaseException | None, float], None] | None = None,
    deadline: float | None = None,
) -> AsyncRetrying:
    """The retry loop for one call: ``async for attempt in retrying(...): with attempt: ...``.

    `on_retry(error, wait_seconds)` is told about each failed attempt that will be retried.
    `deadline` (`time.monotonic()`): the end of the call's retry budget; no retry starts at or after it.
    """

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        if on_retry is not None:
            on_retry(exc, wait)
        log.warning(
            "LLM call (role %s) attempt %d/%d failed: %s; retrying in %.2fs",
            role, state.attempt_number, config.max_retries + 1, exc, wait,
        )

    return AsyncRetrying(
        stop=stop_after_attempt(config.max_retries + 1) | _StopPast(deadline if deadline is not None else math.inf),
        wait=_Wait(config),
        retry=retry_if_exception(_is_retryable),
        before_sleep=before_sleep,
        reraise=True,
    )
