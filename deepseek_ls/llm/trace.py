"""`CallTrace`: what one `complete` call did, as recorded in its `LLMCall@v1` event."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from deepseek_ls.llm.errors import InterruptedResponse, LLMError
from deepseek_ls.llm.types import Completion


def request_hash(body: Mapping[str, Any]) -> str:
    """sha256 of the (redacted) request body in canonical JSON: replay compares it."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _ms(start: float, end: float) -> float:
    return round((end - start) * 1000.0, 3)


@dataclass
class CallTrace:
    role: str
    profile: str
    call_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.perf_counter)
    # Wall-clock start (UTC): time-of-day billing prices the call at the rates in force then.
    started_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    model: str = ""
    model_entry: str = ""  # the registry entry (`[models.NAME]`) the call used: its prices price the usage
    body: dict[str, Any] = field(default_factory=dict)
    chunks: list[Any] = field(default_factory=list)  # the raw chunks of the last attempt
    attempts: int = 0
    retry_errors: list[str] = field(default_factory=list)  # why each retried attempt failed
    last_error: LLMError | None = None  # the last retried attempt's error
    first_delta_at: float | None = None
    fit: dict[str, Any] | None = None  # what fitting the prompt into the window did (`FitReport`)
    dropped_params: list[str] = field(default_factory=list)  # sent, rejected by the server, dropped

    def note_retry(self, error: BaseException | None, wait: float) -> None:
        message = getattr(error, "user_message", None) or repr(error)
        self.retry_errors.append(f"{message} (waited {wait:.2f}s)")
        if isinstance(error, LLMError):
            self.last_error = error

    def mark_first_delta(self) -> None:
        if self.first_delta_at is None:
            self.first_delta_at = time.perf_counter()

    @property
    def ttft_ms(self) -> float | None:
        return None if self.first_delta_at is None else _ms(self.started, self.first_delta_at)

    def finish(self, completion: Completion) -> Completion:
        """The completion stamped with this call's identity and timings."""
        return completion.model_copy(
            update={
                "model": completion.model or self.model,
                "profile": self.profile,
                "role": self.role,
                "ttft_ms": self.ttft_ms,
                "total_ms": _ms(self.started, time.perf_counter()),
                "retries": max(self.attempts - 1, 0),
            }
        )

    def payload(self, *, completion: Completion | None = None, error: LLMError | str | None = None) -> dict[str, Any]:
        """The `LLMCall@v1` payload; `error` is an `LLMError` or ``"cancelled"``."""
        response = completion or (error.partial if isinstance(error, InterruptedResponse) else None)
        payload: dict[str, Any] = {
            "call_id": self.call_id,
            "role": self.role,
            "profile": self.profile,
            "model": self.model,
            "model_entry": self.model_entry,
            "started_at": self.started_at,
            "request_hash": request_hash(self.body) if self.body else "",
            "chunks": self.chunks,
            "response": response.model_dump(mode="json") if response else {},
            "usage": response.usage.model_dump(mode="json") if response else {},
            "ttft_ms": self.ttft_ms,
            "total_ms": _ms(self.started, time.perf_counter()),
            "retries": max(self.attempts - 1, 0),
            "retry_errors": self.retry_errors,
            "error": None,
        }
        if self.fit is not None:
            payload["fit"] = self.fit
        if self.dropped_params:
            payload["dropped_params"] = self.dropped_params
        if error is not None:
            payload["error"] = error if isinstance(error, str) else error.user_message
            payload["error_kind"] = "cancelled" if isinstance(error, str) else error.kind
        return payload
