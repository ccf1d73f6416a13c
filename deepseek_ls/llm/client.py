"""The DeepSeek (OpenAI-compatible) chat client used by every agent role.

One `LLMClient` per process (it pools connections). Each `complete` call:
resolves the profile, prepares the history (thinking-mode rule), redacts the
body, POSTs `/chat/completions` with the `X-DeepSeek-LS-Role` header, retries
what is worth retrying, assembles the answer, and records one `LLMCall@v1`
event with the raw chunks so replay can reproduce it. Cancelling the awaiting
task closes the HTTP stream.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm import history
from deepseek_ls.llm.errors import LLMError
from deepseek_ls.llm.http_errors import error_from_status, error_from_transport
from deepseek_ls.llm.profiles import ResolvedProfile, resolve_profile
from deepseek_ls.llm.retry import retrying
from deepseek_ls.llm.stream import DeltaCallback, StreamReader
from deepseek_ls.llm.trace import CallTrace, request_hash
from deepseek_ls.llm.types import Completion
from deepseek_ls.policy import redact as redaction
from deepseek_ls.store.sink import EventSink, NullSink

__all__ = ["ROLE_HEADER", "LLMClient", "request_hash"]  # request_hash: re-exported for replay

ROLE_HEADER = "X-DeepSeek-LS-Role"


class LLMClient:
    def __init__(
        self,
        config: LLMConfig,
        *,
        sink: EventSink | None = None,
        redact: Callable[[Any], Any] | None = None,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = config
        self.sink = sink or NullSink()
        self._redact = redact
        self._env = env
        self._transport = transport
        self._http: httpx.AsyncClient | None = None

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            timeout = httpx.Timeout(
                connect=self.config.connect_timeout_seconds,
                read=self.config.idle_timeout_seconds,
                write=self.config.idle_timeout_seconds,
                pool=self.config.connect_timeout_seconds,
            )
            self._http = httpx.AsyncClient(timeout=timeout, transport=self._transport)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> "LLMClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def resolve(self, profile: str = "fast", model: str | None = None) -> ResolvedProfile:
        """The profile as a call would use it (raises `AuthError` when the key is missing)."""
        return resolve_profile(self.config, profile, model=model, env=self._env or os.environ)

    def build_body(
        self,
        resolved: ResolvedProfile,
        messages: Sequence[Mapping[str, Any]],
        *,
        stream: bool,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": resolved.model,
            "messages": history.prepare_messages(messages, thinking=resolved.thinking),
            **resolved.params,
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        redact = self._redact or redaction.redact_obj  # looked up now: the policy layer may replace it
        return redact(body)

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: str,
        profile: str = "fast",
        tools: list[dict[str, Any]] | None = None,
        stream: bool | None = None,
        on_delta: DeltaCallback | None = None,
        model: str | None = None,
        tool_choice: Any = None,
    ) -> Completion:
        """Run one chat completion; stream deltas to `on_delta` as they arrive.

        Raises a typed `LLMError` (see `errors.py`); `InterruptedResponse`
        carries the partial answer.
        """
        stream = self.config.stream if stream is None else stream
        trace = CallTrace(role=role, profile=profile)
        try:
            resolved = self.resolve(profile, model)
            trace.model = resolved.model
            trace.body = self.build_body(resolved, messages, stream=stream, tools=tools, tool_choice=tool_choice)
            async for attempt in retrying(self.config, role=role, on_retry=trace.note_retry):
                with attempt:
                    trace.attempts += 1
                    reader = StreamReader(
                        base_url=resolved.base_url,
                        idle_timeout=self.config.idle_timeout_seconds,
                        on_delta=on_delta,
                        on_first_delta=trace.mark_first_delta,
                    )
                    trace.chunks = reader.chunks
                    completion = await self._attempt(resolved, trace.body, role, reader)
        except LLMError as exc:
            exc.attempts = max(trace.attempts, 1)
            self.sink.emit("LLMCall@v1", trace.payload(error=exc))
            raise
        except asyncio.CancelledError:
            self.sink.emit("LLMCall@v1", trace.payload(error="cancelled"))
            raise
        completion = trace.finish(completion)
        self.sink.emit("LLMCall@v1", trace.payload(completion=completion))
        return completion

    async def _attempt(
        self, resolved: ResolvedProfile, body: dict[str, Any], role: str, reader: StreamReader
    ) -> Completion:
        headers = {
            "Authorization": f"Bearer {resolved.api_key}",
            ROLE_HEADER: role,
            "Accept": "text/event-stream" if body.get("stream") else "application/json",
        }
        url = f"{resolved.base_url}/chat/completions"
        key_env = self.config.profiles[resolved.name].api_key_env or self.config.api_key_env
        try:
            async with self._client().stream("POST", url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    text = (await response.aread()).decode("utf-8", "replace")
                    raise error_from_status(response.status_code, response.headers, text, key_env=key_env)
                return await reader.read(response)
        except httpx.HTTPError as exc:  # connect errors, timeouts before any data
            raise error_from_transport(exc, resolved.base_url) from exc
