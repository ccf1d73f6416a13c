"""Typed LLM errors: each says what happened and what to do, and maps to a CLI exit code.

`retryable` errors are retried with backoff by the client; when the retries run
out the last one is raised with `attempts` set. `InterruptedResponse` is never
retried: data had already reached the caller, so it carries what arrived.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deepseek_ls.llm.types import Completion


class LLMError(Exception):
    """Base class. `user_message` is one line fit for a status bar or stderr."""

    exit_code = 10
    retryable = False
    kind = "llm"

    def __init__(
        self,
        user_message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.status = status
        self.retry_after = retry_after  # seconds the server asked us to wait, if it said
        self.detail = detail  # the server's own message, if any
        self.attempts = 1


class AuthError(LLMError):
    exit_code = 3
    kind = "auth"


class BalanceError(LLMError):
    exit_code = 4
    kind = "balance"


class RateLimitError(LLMError):
    exit_code = 5
    retryable = True
    kind = "rate_limit"


class ServerError(LLMError):
    exit_code = 6
    retryable = True
    kind = "server"


class NetworkError(LLMError):
    exit_code = 7
    retryable = True
    kind = "network"


class BudgetSpent(NetworkError):
    """An attempt cut short because the call's retry budget (`llm.retry_budget_seconds`) ran out before
    its first token: the client reports the previous attempt's error instead, when there was one (the
    server's 503, not our own deadline). Never retried: no budget is left for another attempt."""

    retryable = False


class BadRequestError(LLMError):
    exit_code = 8
    kind = "bad_request"


class ContextLengthError(BadRequestError):
    """The prompt does not fit the model's context window (ours to know, or the server said so)."""

    kind = "context_length"


class CallTimeoutError(NetworkError):
    """No first token within the first-token timeout, or the call's total-time cap ran out.

    Not retried: sending the same prompt again to a server that could not answer it in time
    only doubles the wait.
    """

    retryable = False
    kind = "timeout"


class InterruptedResponse(LLMError):
    """The stream broke after data had flowed; `partial` holds what arrived."""

    exit_code = 9
    kind = "interrupted"

    def __init__(self, user_message: str, *, partial: "Completion", detail: str | None = None) -> None:
        super().__init__(user_message, detail=detail)
        self.partial = partial


_ERROR_CLASSES = (LLMError, AuthError, BalanceError, RateLimitError, ServerError, NetworkError,
                  BadRequestError, ContextLengthError, CallTimeoutError, InterruptedResponse)
EXIT_CODES: dict[str, int] = {cls.kind: cls.exit_code for cls in _ERROR_CLASSES}


def error_from_record(payload: dict) -> LLMError:
    """The typed error a recorded `LLMCall@v1` payload describes (for replay).

    An interrupted call carries its recorded partial answer again.
    """
    from deepseek_ls.llm.types import Completion

    kind = payload.get("error_kind") or "llm"
    message = payload.get("error") or "the recorded LLM call failed"
    if kind == "interrupted":
        return InterruptedResponse(message, partial=Completion.model_validate(payload.get("response") or {}))
    cls = next((c for c in _ERROR_CLASSES if c.kind == kind), LLMError)
    return cls(message)
