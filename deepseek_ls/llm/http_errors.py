"""Map HTTP answers and transport failures to typed `LLMError`s with actionable messages."""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx

from deepseek_ls.llm.errors import (
    AuthError,
    BadRequestError,
    BalanceError,
    LLMError,
    NetworkError,
    RateLimitError,
    ServerError,
)
from deepseek_ls.llm.retry import parse_retry_after

RETRYABLE_STATUS = {429, 500, 502, 503, 504}


def server_message(body: str) -> str:
    """The `error.message` of a DeepSeek/OpenAI error body, else the body itself (shortened)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:300]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if data.get("message"):
            return str(data["message"])
    return body.strip()[:300]


def error_from_status(status: int, headers: Mapping[str, str], body: str, *, key_env: str) -> LLMError:
    detail = server_message(body)
    said = f" (server said: {detail})" if detail else ""
    retry_after = parse_retry_after(headers)
    if status in (401, 403):
        error: LLMError = AuthError(
            f"{key_env} is not set or invalid: the API answered {status}{said}. "
            f"Check the key at https://platform.deepseek.com/api_keys",
            status=status, detail=detail,
        )
    elif status == 402:
        error = BalanceError(
            f"insufficient balance on the DeepSeek account (402){said}. "
            "Top up at https://platform.deepseek.com/top_up",
            status=status, detail=detail,
        )
    elif status == 429:
        error = RateLimitError(f"rate limited by the API (429){said}; wait and retry", status=status,
                               retry_after=retry_after, detail=detail)
    elif status >= 500:
        error = ServerError(f"the API failed with {status}{said}; retry later", status=status,
                            retry_after=retry_after, detail=detail)
        error.retryable = status in RETRYABLE_STATUS
    elif status in (400, 404, 422):
        what = "invalid parameters" if status == 422 else "bad request"
        error = BadRequestError(f"the API rejected the request as {what} ({status}){said}",
                                status=status, detail=detail)
    else:
        error = LLMError(f"unexpected answer {status} from the API{said}", status=status, detail=detail)
    # A server may say explicitly whether retrying makes sense (OpenAI convention).
    should_retry = headers.get("x-should-retry")
    if should_retry in ("true", "false"):
        error.retryable = should_retry == "true"
    return error


def error_from_transport(exc: httpx.HTTPError, base_url: str) -> NetworkError:
    if isinstance(exc, httpx.TimeoutException):
        return NetworkError(f"timed out talking to {base_url} ({type(exc).__name__}); check the network or raise "
                            "llm.connect_timeout_seconds / llm.idle_timeout_seconds", detail=str(exc))
    if isinstance(exc, httpx.ConnectError):
        return NetworkError(f"cannot connect to {base_url}: {exc}; check the network and llm.base_url / "
                            "DEEPSEEK_BASE_URL", detail=str(exc))
    return NetworkError(f"connection to {base_url} failed: {exc or type(exc).__name__}", detail=str(exc))
