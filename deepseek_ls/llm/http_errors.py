"""Map HTTP answers and transport failures to typed `LLMError`s with actionable messages."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from collections.abc import Iterable, Mapping

import httpx

from deepseek_ls.llm.errors import (
    AuthError,
    BadRequestError,
    BalanceError,
    ContextLengthError,
    LLMError,
    NetworkError,
    RateLimitError,
    ServerError,
)
from deepseek_ls.llm.retry import parse_retry_after

RETRYABLE_STATUS = {429, 500, 502, 503, 504}

_REJECTS = re.compile(r"unsupported|not supported|does not support|unrecogni[sz]ed|unknown|extra (?:field|input|"
                      r"argument)|not permitted|not allowed|invalid", re.IGNORECASE)
_CONTEXT = re.compile(r"context (?:length|size|window)|maximum context|exceeds? the (?:available )?context|"
                      r"too many tokens|prompt is too long|n_ctx|exceed_context", re.IGNORECASE)


def unsupported_param(detail: str, sent: Iterable[str]) -> str | None:
    """The request parameter a 400 says the server does not take, if it names one we sent."""
    if not detail or not _REJECTS.search(detail):
        return None
    for name in sent:
        if re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", detail):
            return name
    return None


def server_message(body: str) -> str:
    """The `error.message` of a DeepSeek/OpenAI error body, else the body itself: one line, shortened
    (an HTML page, a proxy's or a gateway's, gives its title, else its text)."""
    return _one_line(_message(body))


def _message(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return html_page_text(body) or body
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if data.get("message"):
            return str(data["message"])
    return body


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


class _PageText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title: list[str] = []
        self.text: list[str] = []
        self._where: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self._where.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._where:
            del self._where[self._where.index(tag):]

    def handle_data(self, data: str) -> None:
        if "title" in self._where:
            self.title.append(data)
        elif not {"script", "style"} & set(self._where):
            self.text.append(data)


def html_page_text(body: str) -> str | None:
    """What an HTML page says (its title, else its text), or None when `body` is not HTML."""
    if not re.match(r"\s*<(?:!doctype|html|head|body|title|h\d|p|center)\b", body, re.IGNORECASE):
        return None
    page = _PageText()
    page.feed(body)
    return _one_line(" ".join(page.title) or " ".join(page.text)) or "an empty page"


def error_from_status(
    status: int,
    headers: Mapping[str, str],
    body: str,
    *,
    key_env: str,
    url: str = "",
    provider: str = "deepseek",
    model: str = "",
    window: int | None = None,
) -> LLMError:
    """The typed error for a non-200 answer from `url`; advice fits the server (`provider`) that sent it."""
    detail = server_message(body)
    said = f" (server said: {detail})" if detail else ""
    retry_after = parse_retry_after(headers)
    deepseek = provider == "deepseek"
    if status in (401, 403):
        advice = ("Check the key at https://platform.deepseek.com/api_keys" if deepseek else
                  f"Check the key the server at {url or 'that address'} expects (or unset {key_env} "
                  "if it takes none)")
        error: LLMError = AuthError(
            f"{key_env} is not set or invalid: the API answered {status}{said}. {advice}",
            status=status, detail=detail,
        )
    elif status == 402:
        advice = "Top up at https://platform.deepseek.com/top_up" if deepseek else "Check the account of that server"
        error = BalanceError(f"insufficient balance on the account (402){said}. {advice}", status=status, detail=detail)
    elif status == 404:
        error = BadRequestError(f"{url or 'the API'} answered 404 (not found){said}; {_not_found_advice(url, model, deepseek)}",
                                status=status, detail=detail)
    elif status in (400, 413, 422) and _CONTEXT.search(detail or ""):
        where = f" of {window} tokens" if window else ""
        error = ContextLengthError(
            f"the prompt does not fit the model's context window{where}{said}; shorten the request or raise the "
            "server's context size and the model's context_window together",
            status=status, detail=detail,
        )
    elif status == 429:
        error = RateLimitError(f"rate limited by the API (429){said}; wait and retry", status=status,
                               retry_after=retry_after, detail=detail)
    elif status >= 500:
        error = ServerError(f"the API failed with {status}{said}; retry later", status=status,
                            retry_after=retry_after, detail=detail)
        error.retryable = status in RETRYABLE_STATUS
    elif 300 <= status < 400:
        where = headers.get("location") or "another address"
        error = BadRequestError(
            f"{url or 'the API'} answered {status}, redirecting to {where}: redirects are not followed, so the API "
            "key never goes to another address. Set the base URL to the address that answers "
            "(llm.base_url, DEEPSEEK_BASE_URL or the model's base_url)", status=status, detail=detail)
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


MIN_SECRET_CHARS = 6  # shorter "keys" (tests, placeholders) would blank out ordinary words


def without_secret(error: LLMError, secret: str | None) -> LLMError:
    """`error` with `secret` (the API key) masked wherever a server echoed it: message, detail, args.

    Servers do echo keys (OpenAI-style 401s, proxies' error pages); a message goes to the user,
    the logs and the event log, so it must never carry the key.
    """
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return error
    mask = f"{secret[:3]}***" if secret[:3].isalpha() or secret.startswith("sk-") else "***"

    def clean(value: object) -> object:
        return value.replace(secret, mask) if isinstance(value, str) else value

    error.user_message = clean(error.user_message)  # type: ignore[assignment]
    error.detail = clean(error.detail)  # type: ignore[assignment]
    error.args = tuple(clean(a) for a in error.args)
    return error


def error_from_transport(exc: httpx.HTTPError, base_url: str) -> NetworkError:
    if isinstance(exc, httpx.TimeoutException):
        return NetworkError(f"timed out talking to {base_url} ({type(exc).__name__}); check the network or raise "
                            "llm.connect_timeout_seconds / llm.idle_timeout_seconds", detail=str(exc))
    if isinstance(exc, httpx.ConnectError):
        return NetworkError(f"cannot connect to {base_url}: {exc}; check the network and llm.base_url / "
                            "DEEPSEEK_BASE_URL", detail=str(exc))
    return NetworkError(f"connection to {base_url} failed: {exc or type(exc).__name__}", detail=str(exc))


def _not_found_advice(url: str, model: str, deepseek: bool) -> str:
    """404 means a wrong path far more often than a missing model: say which fix is likelier."""
    base = url.removesuffix("/chat/completions").rstrip("/")
    if base and not deepseek and not re.search(r"/v\d+(?:beta)?$", base):
        return (f"OpenAI-compatible servers usually serve under /v1: set the base URL to {base}/v1 "
                "(llm.base_url, DEEPSEEK_BASE_URL or the model's base_url)")
    return f"check the base URL {base or '(unset)'} and that the server knows the model {model!r}"
