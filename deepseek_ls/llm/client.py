"""The DeepSeek (OpenAI-compatible) chat client used by every agent role.

One `LLMClient` per process (it pools connections). Each `complete` call:
resolves the profile to a registry entry, prepares the history
(thinking-mode rule), fits the prompt into the model's window, redacts the
body, POSTs `/chat/completions` with the `X-DeepSeek-LS-Role` header, retries
what is worth retrying within the call's total-time cap, assembles the answer,
and records one `LLMCall@v1` event with the raw chunks so replay can reproduce
it. Cancelling the awaiting task closes the HTTP stream.

Compatibility with servers that are not DeepSeek: parameters the entry's
capabilities exclude are never sent; a 400 naming a parameter we sent is
retried once without it, and the parameter stays off for that server and model
for the rest of the process (with a warning).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm import history
from deepseek_ls.llm.errors import (
    BadRequestError,
    BudgetSpent,
    CallTimeoutError,
    ContextLengthError,
    InterruptedResponse,
    LLMError,
)
from deepseek_ls.llm.fit import FitReport, fit_messages, measure_messages, prompt_budget, strip_tags
from deepseek_ls.llm.http_errors import error_from_status, error_from_transport, unsupported_param, without_secret
from deepseek_ls.llm.models import DROPPABLE_PARAMS, sends_reasoning_back
from deepseek_ls.llm.profiles import ResolvedProfile, resolve_profile
from deepseek_ls.llm.retry import retrying
from deepseek_ls.llm.stream import (
    ERROR_BODY_BYTES,
    DeltaCallback,
    StreamReader,
    read_capped,
)
from deepseek_ls.llm.tokens import PromptCounter, message_text
from deepseek_ls.llm.trace import CallTrace, request_hash
from deepseek_ls.llm.types import Completion, Usage
from deepseek_ls.policy import redact as redaction
from deepseek_ls.sink import EventSink, NullSink

__all__ = ["ROLE_HEADER", "LLMClient", "request_hash"]  # request_hash: re-exported for replay

ROLE_HEADER = "X-DeepSeek-LS-Role"
log = logging.getLogger("deepseek_ls.llm")

# Errors after which the profile's `fallback_model` is tried: the model is down or out of capacity.
_FALLBACK_KINDS = {"server", "rate_limit", "network"}
_MAX_SCALE = 3.0  # the token estimate is never trusted to run low by more than this


class LLMClient:
    def __init__(
        self,
        config: LLMConfig,
        *,
        sink: EventSink | None = None,
        redact: Callable[[Any], Any] | None = None,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.sink = sink or NullSink()
        self._redact = redact
        self._env = env
        self._transport = transport
        self._warn = warn or log.warning
        self._http: httpx.AsyncClient | None = None
        # (base_url, model id) -> parameters that server rejected this session
        self.unsupported: dict[tuple[str, str], set[str]] = {}
        # (base_url, model id) -> how much the token estimate ran low for that model (learned this session)
        self.token_scale: dict[tuple[str, str], float] = {}
        # Told of every failed attempt that will be retried, `(error, wait_seconds)`: the model
        # manager (`llm/capacity.py`) slows every lane down on a 429.
        self.retry_listeners: list[Callable[[BaseException | None, float], None]] = []

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
        """The profile as a call would use it (raises `AuthError` when a required key is missing)."""
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
        """The request body: only what the model takes, its prompt fitted into the window, redacted.

        Raises `ContextLengthError` when the prompt cannot fit.
        """
        return self._build(resolved, messages, stream=stream, tools=tools, tool_choice=tool_choice)[0]

    def _build(
        self,
        resolved: ResolvedProfile,
        messages: Sequence[Mapping[str, Any]],
        *,
        stream: bool,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> tuple[dict[str, Any], FitReport | None]:
        entry = resolved.entry
        report: FitReport | None = None
        thinking_history = sends_reasoning_back(entry, resolved.thinking) if entry else resolved.thinking
        prepared = history.prepare_messages(strip_tags(messages), thinking=thinking_history)
        offered_tools = tools if tools and (entry is None or entry.tools) else None
        if entry is not None:
            prepared, report = self._fit(resolved, messages, prepared, offered_tools)
        body: dict[str, Any] = {"model": resolved.model, "messages": prepared, **resolved.params, "stream": stream}
        if stream and (entry is None or entry.stream_usage):
            body["stream_options"] = {"include_usage": True}
        if offered_tools:
            body["tools"] = offered_tools
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        for name in self.unsupported.get((resolved.base_url, resolved.model), ()):
            body.pop(name, None)
        redact = self._redact or redaction.redact_obj  # looked up now: the policy layer may replace it
        return redact(body), report

    def measure(self, messages: Sequence[Mapping[str, Any]], *, profile: str = "fast", model: str | None = None,
                tools: list[dict[str, Any]] | None = None) -> FitReport | None:
        """What the request for `messages` would hold, counted as `_fit` counts it (the context meter and
        the compaction threshold use this): None for a model the registry does not know (nothing is fitted)."""
        resolved = self.resolve(profile, model)
        entry = resolved.entry
        if entry is None:
            return None
        thinking_history = sends_reasoning_back(entry, resolved.thinking)
        prepared = history.prepare_messages(strip_tags(messages), thinking=thinking_history)
        offered = tools if tools and entry.tools else None
        counter, budget, _ = self._budget(resolved, offered)
        return measure_messages(_tagged(prepared, messages), budget=budget, counter=counter,
                                context_window=entry.context_window)

    def _budget(self, resolved: ResolvedProfile, tools: list[dict[str, Any]] | None) -> tuple[PromptCounter, int, int]:
        entry = resolved.entry
        assert entry is not None
        counter = PromptCounter(entry.tokenizer, scale=self.token_scale.get((resolved.base_url, resolved.model), 1.0))
        max_tokens = int(resolved.params.get("max_tokens") or entry.output_cap)
        tools_tokens = counter.count(repr(tools)) if tools else 0
        return counter, prompt_budget(entry.context_window, max_tokens, tools_tokens), max_tokens

    def _fit(self, resolved: ResolvedProfile, tagged: Sequence[Mapping[str, Any]], prepared: list[dict[str, Any]],
             tools: list[dict[str, Any]] | None) -> tuple[list[dict[str, Any]], FitReport]:
        entry = resolved.entry
        assert entry is not None
        counter, budget, max_tokens = self._budget(resolved, tools)
        prepared = _tagged(prepared, tagged)
        fitted, report = fit_messages(prepared, budget=budget, counter=counter, model=resolved.model,
                                      context_window=entry.context_window, max_tokens=max_tokens)
        if report.shortened:
            log.info("prompt for %s shortened to fit its window: %s", resolved.model, report.shortened)
        return fitted, report

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
        model_slot: Callable[[str | None], AbstractAsyncContextManager[Any]] | None = None,
    ) -> Completion:
        """Run one chat completion; stream deltas to `on_delta` as they arrive.

        Raises a typed `LLMError` (see `errors.py`); `InterruptedResponse`
        carries the partial answer. When the model is down or out of capacity
        after the retries and the profile names a `fallback_model`, the call is
        made once more with that model.

        `model_slot(model)` (the model manager's, `llm/capacity.py`) is held
        around each attempt: the call's model (`model`, None for the profile's),
        then, released first, the fallback model's. So the fallback runs under
        its own model's `max_inflight` and 429 pause, and a call never holds two
        models' slots at once (two calls falling back across each other cannot
        deadlock).
        """
        slot = model_slot or (lambda _model: contextlib.nullcontext())
        try:
            async with slot(model):
                return await self._complete_once(messages, role=role, profile=profile, tools=tools, stream=stream,
                                                 on_delta=on_delta, model=model, tool_choice=tool_choice)
        except LLMError as exc:
            fallback = self._fallback_for(profile, model, exc)
            if fallback is None:
                raise
            self._warn(f"{exc.user_message}; trying the fallback model {fallback!r}")
        async with slot(fallback):
            return await self._complete_once(messages, role=role, profile=profile, tools=tools, stream=stream,
                                             on_delta=on_delta, model=fallback, tool_choice=tool_choice)

    def _fallback_for(self, profile: str, model: str | None, exc: LLMError) -> str | None:
        chosen = self.config.profiles.get(profile)
        down = exc.kind in _FALLBACK_KINDS or getattr(exc, "model_down", False)
        if chosen is None or not chosen.fallback_model or not down:
            return None
        if isinstance(exc, InterruptedResponse) or chosen.fallback_model == (model or chosen.model):
            return None
        return chosen.fallback_model

    async def _complete_once(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: str,
        profile: str,
        tools: list[dict[str, Any]] | None,
        stream: bool | None,
        on_delta: DeltaCallback | None,
        model: str | None,
        tool_choice: Any,
    ) -> Completion:
        stream = self.config.stream if stream is None else stream
        trace = CallTrace(role=role, profile=profile)
        reader: StreamReader | None = None
        try:
            resolved = self.resolve(profile, model)
            if resolved.note:
                self._warn(resolved.note)
            entry = resolved.entry
            trace.model = resolved.model
            trace.model_entry = resolved.entry_name
            # In a thread: counting a long prompt with a real tokenizer takes a while (never block the loop).
            trace.body, fit = await asyncio.to_thread(
                self._build, resolved, messages, stream=stream, tools=tools, tool_choice=tool_choice)
            trace.fit = fit.as_dict() if fit else None
            total = entry.total_timeout_seconds if entry else None
            first_wait = ((entry.first_token_timeout_seconds if entry else None)
                          or self.config.first_token_timeout_seconds or self.config.idle_timeout_seconds)
            dropped_once = refit_once = False
            tries = 0  # attempts of the current retry loop
            budget_end = time.monotonic() + self.config.retry_budget_seconds
            try:
                async with asyncio.timeout(total):
                    while True:
                        try:
                            async for attempt in retrying(self.config, role=role, deadline=budget_end,
                                                          on_retry=lambda e, w: self._retried(trace, e, w)):
                                with attempt:
                                    trace.attempts += 1
                                    tries = attempt.retry_state.attempt_number
                                    reader = StreamReader(
                                        base_url=resolved.base_url,
                                        idle_timeout=self.config.idle_timeout_seconds,
                                        first_token_timeout=first_wait,
                                        first_token_explicit=bool(entry and entry.first_token_timeout_seconds),
                                        first_token_setting=_first_token_setting(self.config, resolved),
                                        on_delta=on_delta,
                                        on_first_delta=trace.mark_first_delta,
                                        reasoning_field=entry.reasoning_field if entry else "reasoning_content",
                                        window=entry.context_window if entry else None,
                                        prompt_tokens=trace.fit["prompt_tokens"] if trace.fit else None,
                                        max_tokens=_max_tokens(trace.body),
                                    )
                                    trace.chunks = reader.chunks
                                    completion = await self._attempt(resolved, trace.body, role, reader, first_wait,
                                                                     budget_end - time.monotonic())
                            break
                        except ContextLengthError as exc:
                            refitted = None if refit_once else await self._refit(resolved, messages, trace, stream,
                                                                                 tools, tool_choice)
                            if refitted is None:
                                raise
                            refit_once = True
                            self._warn(f"{exc.user_message}; sending it again fitted with a larger token estimate")
                            trace.body = refitted
                        except BadRequestError as exc:
                            name = None if dropped_once else unsupported_param(exc.detail or "", _droppable(trace.body))
                            if name is None:
                                raise
                            dropped_once = True
                            self.unsupported.setdefault((resolved.base_url, resolved.model), set()).add(name)
                            self._warn(f"{resolved.base_url} does not take {name!r} for {resolved.model}: "
                                       f"sending requests without it from now on (server said: {exc.detail})")
                            trace.body = {k: v for k, v in trace.body.items() if k != name}
                            trace.dropped_params.append(name)
                        except LLMError as exc:
                            if isinstance(exc, BudgetSpent):
                                # The budget cut the last attempt short: the server's own error stands.
                                raise self._out_of_budget(trace.last_error or exc, trace.attempts) from exc
                            if exc.retryable and (tries <= self.config.max_retries or time.monotonic() >= budget_end):
                                raise self._out_of_budget(exc, trace.attempts) from exc
                            raise
            except TimeoutError:
                raise _total_timeout(resolved.base_url, total, reader) from None
        except LLMError as exc:
            exc.attempts = max(trace.attempts, 1)
            self.sink.emit("LLMCall@v1", trace.payload(error=exc))
            raise
        except asyncio.CancelledError:
            self.sink.emit("LLMCall@v1", trace.payload(error="cancelled"))
            raise
        if entry is not None and not completion.usage.prompt_tokens and not completion.usage.completion_tokens:
            completion = completion.model_copy(update={"usage": _estimated_usage(trace, completion, entry.tokenizer)})
        else:
            self._calibrate(resolved, trace, completion)
        completion = trace.finish(completion)
        self.sink.emit("LLMCall@v1", trace.payload(completion=completion))
        return completion

    def _out_of_budget(self, exc: LLMError, attempts: int) -> LLMError:
        """The last retryable error once the retry budget stopped the retries: a stall or a dropped
        connection becomes a `CallTimeoutError` saying so; other kinds keep their type."""
        budget = self.config.retry_budget_seconds
        note = (f"gave up after {attempts} attempt{'s' if attempts != 1 else ''} within the retry budget of "
                f"{budget:g}s (llm.retry_budget_seconds)")
        if exc.kind in ("network", "timeout"):
            error: LLMError = CallTimeoutError(f"{exc.user_message}; {note}", detail=exc.detail)
            error.model_down = True  # type: ignore[attr-defined]  # a stall, not a prompt too slow: `fallback_model`
        else:
            error = exc
            error.user_message = f"{exc.user_message}; {note}"
            error.args = (error.user_message,)
        return error

    def _retried(self, trace: CallTrace, error: BaseException | None, wait: float) -> None:
        trace.note_retry(error, wait)
        for listener in list(self.retry_listeners):
            try:
                listener(error, wait)
            except Exception:  # noqa: BLE001 - a listener never breaks the call
                log.exception("retry listener failed")

    async def _refit(self, resolved: ResolvedProfile, messages: Sequence[Mapping[str, Any]], trace: CallTrace,
                     stream: bool, tools: list[dict[str, Any]] | None, tool_choice: Any) -> dict[str, Any] | None:
        """The body fitted again with a 1.5x larger token estimate, when the server said the prompt was too
        long and our count was only an estimate; None when that changes nothing (never re-send the same prompt)."""
        if not trace.fit or trace.fit.get("exact"):
            return None
        key = (resolved.base_url, resolved.model)
        self.token_scale[key] = min(self.token_scale.get(key, 1.0) * 1.5, _MAX_SCALE)
        body, fit = await asyncio.to_thread(self._build, resolved, messages, stream=stream, tools=tools,
                                            tool_choice=tool_choice)
        if body.get("messages") == trace.body.get("messages"):
            return None
        trace.fit = fit.as_dict() if fit else None
        return body

    def _calibrate(self, resolved: ResolvedProfile, trace: CallTrace, completion: Completion) -> None:
        """Learn from the server's own prompt count how far our estimate runs low for this model."""
        fit = trace.fit
        if not fit or fit.get("exact") or not fit.get("prompt_tokens") or completion.usage.estimated:
            return
        ratio = completion.usage.prompt_tokens / fit["prompt_tokens"]
        key = (resolved.base_url, resolved.model)
        if ratio > self.token_scale.get(key, 1.0):
            self.token_scale[key] = min(ratio * 1.05, _MAX_SCALE)

    async def _attempt(
        self, resolved: ResolvedProfile, body: dict[str, Any], role: str, reader: StreamReader, first_wait: float,
        budget_left: float,
    ) -> Completion:
        """One HTTP exchange; its error never carries the API key, whatever the server echoed (masked here,
        before the retry loop logs it or the call records it)."""
        try:
            return await self._exchange(resolved, body, role, reader, first_wait, budget_left)
        except LLMError as exc:
            raise without_secret(exc, resolved.api_key) from exc.__cause__

    async def _exchange(
        self, resolved: ResolvedProfile, body: dict[str, Any], role: str, reader: StreamReader, first_wait: float,
        budget_left: float,
    ) -> Completion:
        headers = {
            ROLE_HEADER: role,
            "Accept": "text/event-stream" if body.get("stream") else "application/json",
        }
        if resolved.api_key:
            headers["Authorization"] = f"Bearer {resolved.api_key}"
        url = f"{resolved.base_url}/chat/completions"
        entry = resolved.entry
        # Servers that only answer after the prompt is processed (llama.cpp on a CPU) send no headers
        # before the first token: httpx may wait that long too; our own deadlines do the rest.
        timeout = httpx.Timeout(
            connect=self.config.connect_timeout_seconds,
            read=max(self.config.idle_timeout_seconds, first_wait + self.config.connect_timeout_seconds + 1.0),
            write=self.config.idle_timeout_seconds,
            pool=self.config.connect_timeout_seconds,
        )
        try:
            # Connecting is bounded by httpx's connect timeout; the first-token wait starts once the request
            # is sent (`reader.on_trace`). Never past the retry budget: the first token must come within it
            # (data then moves the deadline, so a long answer that streams is not cut).
            async with asyncio.timeout(min(first_wait + self.config.connect_timeout_seconds,
                                           max(budget_left, 0.0))) as deadline:
                reader.deadline = deadline
                reader.latest = asyncio.get_running_loop().time() + max(budget_left, 0.0)
                async with self._client().stream("POST", url, json=body, headers=headers, timeout=timeout,
                                                 extensions={"trace": reader.on_trace}) as response:
                    if response.status_code != 200:
                        text = (await read_capped(response, ERROR_BODY_BYTES)).decode("utf-8", "replace")
                        raise error_from_status(
                            response.status_code, response.headers, text, key_env=resolved.key_env or "the API key",
                            url=url, provider=entry.provider if entry else "deepseek", model=resolved.model,
                            window=entry.context_window if entry else None,
                        )
                    return await reader.read(response)
        except TimeoutError:
            if (whole := reader.whole()) is not None:
                return whole
            raise reader.timed_out() from None
        except httpx.HTTPError as exc:  # connect errors, timeouts before any data
            raise error_from_transport(exc, resolved.base_url) from exc


def _first_token_setting(config: LLMConfig, resolved: ResolvedProfile) -> str:
    """The setting the first-token wait of a call comes from (named in its timeout error)."""
    if resolved.entry is not None and resolved.entry.first_token_timeout_seconds:
        return f"models.{resolved.entry_name}.first_token_timeout_seconds"
    if config.first_token_timeout_seconds:
        return "llm.first_token_timeout_seconds"
    return "llm.idle_timeout_seconds"


def _max_tokens(body: Mapping[str, Any]) -> int | None:
    value = body.get("max_tokens")
    return value if isinstance(value, int) else None


def _droppable(body: Mapping[str, Any]) -> list[str]:
    return [name for name in DROPPABLE_PARAMS if name in body]


def _total_timeout(base_url: str, total: float | None, reader: StreamReader | None) -> LLMError:
    reason = f"the call ran past its total-time cap of {total:g}s (models.NAME.total_timeout_seconds)"
    if reader is not None and reader.assembler.has_data:
        return InterruptedResponse(f"the answer from {base_url} was stopped: {reason}",
                                   partial=reader.assembler.result(), detail=reason)
    return CallTimeoutError(f"{base_url}: {reason}", detail=reason)


def _estimated_usage(trace: CallTrace, completion: Completion, tokenizer: str | None) -> Usage:
    """Usage counted here when the server reported none (`estimated: true`)."""
    counter = PromptCounter(tokenizer)
    prompt = trace.fit["prompt_tokens"] if trace.fit else sum(
        counter.count(message_text(m)) for m in trace.body.get("messages") or [])
    calls = "".join(c.function.name + c.function.arguments for c in completion.tool_calls)
    output = counter.count(completion.content + (completion.reasoning_content or "") + calls)
    return Usage(prompt_tokens=prompt, completion_tokens=output, total_tokens=prompt + output,
                 prompt_cache_miss_tokens=prompt, estimated=True)


def _tagged(prepared: list[dict[str, Any]], tagged: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The prepared messages with the callers' priority tags carried over (same order, same length)."""
    for message, original in zip(prepared, tagged):
        if isinstance(original, Mapping) and "_fit" in original:
            message["_fit"] = original["_fit"]
    return prepared
