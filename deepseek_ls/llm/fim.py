"""Fill-in-the-middle calls: the text between a prefix and a suffix, for inline completion.

Two endpoints, chosen by the registry entry's `fim_api`:

- ``beta``: DeepSeek's ``POST {base}/beta/completions`` with ``prompt`` (the prefix, related
  snippets first as comments) and ``suffix``; the answer's ``choices[0].text`` and ``usage``.
- ``infill``: llama.cpp's ``POST {base}/infill`` with ``input_prefix``, ``input_suffix``,
  ``input_extra`` (the snippets) and ``n_predict``; the answer's ``content`` and its token counts.

Every body's text goes through the same redaction as every other request before it leaves
(block by block, cached: `redact_blocks`). One call
is one short, unstreamed exchange over one kept-alive connection (`llm/fim_http.py`; httpx where
the environment names a proxy); cancelling the awaiting task closes its connection, so the
server stops generating (no tokens paid for a suggestion nobody will see). Each call, answered,
failed or cancelled, is recorded as an ``LLMCall@v1`` payload (role ``inline``) for the ledger.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import httpx

from deepseek_ls import __version__
from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm.errors import LLMError
from deepseek_ls.llm.fim_http import FimHttp, FimResponse, proxied
from deepseek_ls.llm.http_errors import (
    error_from_status,
    error_from_transport,
    without_secret,
)
from deepseek_ls.llm.profiles import ResolvedProfile, resolve_profile
from deepseek_ls.policy import redact as redaction
from deepseek_ls.sink import EventSink, NullSink

ROLE = "inline"
ROLE_HEADER = "X-DeepSeek-LS-Role"


@dataclass(frozen=True)
class FimRequest:
    """What to complete: the text before and after the cursor, and related code from the workspace."""

    prefix: str
    suffix: str
    max_tokens: int
    snippets: tuple[tuple[str, str], ...] = ()  # (path, text)
    comment: str = "#"  # the file's line-comment marker: snippets go before the prefix as comments


@dataclass(frozen=True)
class FimAnswer:
    text: str
    usage: dict[str, Any] = field(default_factory=dict)


def fim_url(resolved: ResolvedProfile) -> str:
    """Where the entry's FIM endpoint is: beside the chat API's root (a `/v1` or `/beta` suffix dropped)."""
    base = resolved.base_url.rstrip("/")
    for tail in ("/v1", "/beta"):
        base = base.removesuffix(tail)
    api = resolved.entry.fim_api if resolved.entry is not None else "beta"
    return f"{base}/infill" if api == "infill" else f"{base}/beta/completions"


def build_body(resolved: ResolvedProfile, request: FimRequest) -> dict[str, Any]:
    """The request body for the entry's endpoint, its text redacted (`redact_blocks`)."""
    api = resolved.entry.fim_api if resolved.entry is not None else "beta"
    if api == "infill":
        return {
            "input_prefix": redact_blocks(request.prefix), "input_suffix": redact_blocks(request.suffix),
            "input_extra": [{"filename": redact_blocks(path), "text": redact_blocks(text)}
                            for path, text in request.snippets],
            "n_predict": request.max_tokens, "stream": False, "cache_prompt": True,
        }
    return {"model": resolved.model, "prompt": redact_blocks(_with_snippets(request) + request.prefix),
            "suffix": redact_blocks(request.suffix), "max_tokens": request.max_tokens, "stream": False}


_BLANK_LINE = re.compile(r"(\n[ \t]*\n)")


def redact_blocks(text: str) -> str:
    """`text` through the request redaction (`policy.redact.redact_text`), block by block.

    Redacting a few KB takes ~10 ms, on every keystroke; between two keystrokes only the block
    being typed in changes. So the text is redacted in blocks split at blank lines, each block's
    result cached: the same masks as the whole text (no secret shape spans a blank line; a PEM
    block can, so text holding one is redacted whole), for a fraction of the cost.
    """
    if "-----BEGIN" in text or "\n" not in text:
        return redaction.redact_text(text)
    known = redaction.known_secret_count()  # a secret registered since must mask cached blocks too
    return "".join(_redacted_block(part, known) for part in _BLANK_LINE.split(text))


@functools.lru_cache(maxsize=512)
def _redacted_block(block: str, known: int) -> str:
    return redaction.redact_text(block)


def _with_snippets(request: FimRequest) -> str:
    lines: list[str] = []
    for path, text in request.snippets:
        lines.append(f"{request.comment} {path}")
        lines.extend(f"{request.comment} {line}" for line in text.splitlines())
    return "\n".join(lines) + "\n" if lines else ""


def _answer(api: str, data: Any) -> FimAnswer:
    if not isinstance(data, Mapping):
        raise ValueError("the answer is not a JSON object")
    if api == "infill":
        prompt, output = data.get("tokens_evaluated"), data.get("tokens_predicted")
        usage = {"prompt_tokens": prompt, "completion_tokens": output} if isinstance(output, int) else {}
        return FimAnswer(str(data.get("content") or ""), usage)
    choices = data.get("choices") or []
    text = choices[0].get("text") if choices and isinstance(choices[0], Mapping) else None
    if not isinstance(text, str):
        raise ValueError("the answer has no choices[0].text")
    usage = data.get("usage")
    return FimAnswer(text, dict(usage) if isinstance(usage, Mapping) else {})


class FimClient:
    """Fill-in-the-middle calls to one configuration's models (one connection pool)."""

    def __init__(self, config: LLMConfig, *, sink: EventSink | None = None, env: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self.sink = sink or NullSink()
        self._env = env
        self._transport = transport
        self._http: httpx.AsyncClient | None = None
        self._direct: FimHttp | None = None
        self._proxied: dict[str, bool] = {}  # by URL: the environment names a proxy for it

    def resolve(self, profile: str, model: str | None = None) -> ResolvedProfile:
        """The profile as a FIM call uses it (raises `AuthError` without a key, `BadRequestError`
        for an unknown profile)."""
        return resolve_profile(self.config, profile, model=model, env=self._env or os.environ)

    def _client(self) -> httpx.AsyncClient:
        """httpx, for a call through a proxy the environment names (httpx honours it only without
        an explicit transport, as the chat client) or over a test's transport."""
        if self._http is None:
            self._http = httpx.AsyncClient(transport=self._transport, timeout=httpx.Timeout(
                self.config.idle_timeout_seconds, connect=self.config.connect_timeout_seconds))
        return self._http

    async def _post(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response | FimResponse:
        """One POST: over `FimHttp`'s kept-alive connection, or httpx for a proxy or a test's transport."""
        if url not in self._proxied:
            self._proxied[url] = proxied(url)
        if self._transport is None and not self._proxied[url]:
            if self._direct is None:
                self._direct = FimHttp(connect_timeout=self.config.connect_timeout_seconds,
                                       read_timeout=self.config.idle_timeout_seconds,
                                       user_agent=f"deepseek-ls/{__version__}")
            return await self._direct.post(url, body, headers)
        return await self._client().post(url, json=body, headers=headers)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._direct is not None:
            await self._direct.aclose()
            self._direct = None

    async def complete(self, resolved: ResolvedProfile, request: FimRequest, *, timeout: float,
                       on_sent: Callable[[], None] | None = None) -> FimAnswer:
        """One FIM call; raises a typed `LLMError`. Cancelling it closes the connection."""
        payload: dict[str, Any] = {
            "call_id": uuid.uuid4().hex, "role": ROLE, "profile": resolved.name, "model": resolved.model,
            "model_entry": resolved.entry_name, "started_at": datetime.now(timezone.utc).isoformat(),
        }
        started = time.perf_counter()
        try:
            answer = await self._exchange(resolved, request, timeout, on_sent)
        except asyncio.CancelledError:
            self.sink.emit("LLMCall@v1", {**payload, "error": "cancelled", "usage": {},
                                          "latency_ms": round((time.perf_counter() - started) * 1000, 2)})
            raise
        except LLMError as exc:
            self.sink.emit("LLMCall@v1", {**payload, "error": exc.user_message, "usage": {}})
            raise
        self.sink.emit("LLMCall@v1", {**payload, "error": None, "usage": answer.usage,
                                      "latency_ms": round((time.perf_counter() - started) * 1000, 2)})
        return answer

    async def _exchange(self, resolved: ResolvedProfile, request: FimRequest, timeout: float,
                        on_sent: Callable[[], None] | None) -> FimAnswer:
        url = fim_url(resolved)
        api = resolved.entry.fim_api if resolved.entry is not None else "beta"
        headers = {ROLE_HEADER: ROLE}
        if resolved.api_key:
            headers["Authorization"] = f"Bearer {resolved.api_key}"
        body = build_body(resolved, request)
        entry = resolved.entry
        try:
            async with asyncio.timeout(timeout):
                if on_sent is not None:
                    on_sent()
                response = await self._post(url, body, headers)
        except TimeoutError:
            raise without_secret(error_from_transport(httpx.ReadTimeout(
                f"no suggestion within inline_completion.timeout_seconds = {timeout:g}"), url), resolved.api_key) from None
        except httpx.HTTPError as exc:
            raise without_secret(error_from_transport(exc, resolved.base_url), resolved.api_key) from exc
        if response.status_code != 200:
            raise without_secret(error_from_status(
                response.status_code, response.headers, response.text, key_env=resolved.key_env or "the API key",
                url=url, provider=entry.provider if entry else "deepseek", model=resolved.model,
                window=entry.context_window if entry else None), resolved.api_key)
        try:
            return _answer(api, response.json())
        except ValueError as exc:
            raise LLMError(f"{url} answered something that is not a completion ({exc})",
                           detail=response.text[:500]) from None
