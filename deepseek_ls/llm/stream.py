"""Read one HTTP answer (SSE stream or JSON body) into a `Completion`.

The deadlines are ours, not httpx's. The client arms one deadline before it
sends the request (connect timeout + first-token timeout); once the request is
sent (httpcore's trace hook) it is moved to now + the first-token timeout (the
model entry's, for CPU servers that think for minutes before the first token;
else `llm.first_token_timeout_seconds`; else the idle timeout), never past the
end of the call's retry budget. Each data event moves it to now + idle timeout. `: keep-alive` comments are not
events (httpx-sse skips them), so a server that sends nothing but keep-alives
still times out. A failure after data has flowed is an `InterruptedResponse`
carrying what arrived; before that it is a retryable error, except a
first-token timeout the entry set on purpose (the same prompt would take as
long again) and an empty 200 stream (a prompt over the server's window).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from httpx_sse import EventSource

from deepseek_ls.llm.assembly import MalformedChunk, StreamAssembler, completion_from_body
from deepseek_ls.llm.errors import (
    BudgetSpent,
    CallTimeoutError,
    ContextLengthError,
    InterruptedResponse,
    NetworkError,
    ServerError,
)
from deepseek_ls.llm.http_errors import error_from_transport, html_page_text
from deepseek_ls.llm.types import Completion, StreamDelta

DeltaCallback = Callable[[StreamDelta], Awaitable[None] | None]


# The most an answer may weigh on the wire: a streamed token costs ~250 bytes of SSE with its envelope,
# so an honest server stays far below 2 KiB a token of max_tokens; one that ignores the limit (or
# never ends a line) is stopped there instead of growing in memory until the total-time cap.
BYTES_PER_TOKEN = 2048
MIN_ANSWER_BYTES = 8 * 2**20
ERROR_BODY_BYTES = 64 * 2**10  # of a non-200 answer: enough for any error message, never a whole flood


def answer_cap(max_tokens: int | None) -> int:
    """The byte cap of one answer whose output is limited to `max_tokens`."""
    return max(MIN_ANSWER_BYTES, (max_tokens or 0) * BYTES_PER_TOKEN)


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """At most `limit` bytes of a body (an error page); the rest is never read."""
    body = bytearray()
    async for piece in response.aiter_bytes():
        body.extend(piece[: limit - len(body)])
        if len(body) >= limit:
            break
    return bytes(body)


class _TooLarge(Exception):
    pass


class _Capped:
    """The response as `httpx_sse.EventSource` reads it (headers, text), counting what arrives."""

    def __init__(self, response: httpx.Response, limit: int) -> None:
        self.headers = response.headers
        self._response = response
        self._limit = limit
        self.received = 0

    async def aiter_text(self):  # type: ignore[no-untyped-def]
        async for text in self._response.aiter_text():
            self.received += len(text)
            if self.received > self._limit:
                raise _TooLarge
            yield text


# How early a deadline may fire against the budget's own end and still count as the budget's.
_CLOCK_SLACK = 0.005

# Repeated in every chunk and useless for replay once the first chunk has them.
_ENVELOPE = ("id", "object", "created", "model", "system_fingerprint")


def compact_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """A chunk as recorded in `LLMCall@v1` after the first: without the repeated envelope."""
    return {key: value for key, value in chunk.items() if key not in _ENVELOPE}


class StreamReader:
    """Consumes one 200 response. `chunks` keeps the raw chunks for the event log."""

    def __init__(self, *, base_url: str, idle_timeout: float, on_delta: DeltaCallback | None,
                 on_first_delta: Callable[[], None], first_token_timeout: float | None = None,
                 first_token_explicit: bool = False, first_token_setting: str = "llm.idle_timeout_seconds",
                 reasoning_field: str = "reasoning_content",
                 window: int | None = None, prompt_tokens: int | None = None, max_tokens: int | None = None) -> None:
        self._base_url = base_url
        self._idle = idle_timeout
        self._first = first_token_timeout or idle_timeout
        self._first_explicit = first_token_explicit
        self._first_setting = first_token_setting
        self._on_delta = on_delta
        self._on_first_delta = on_first_delta
        self._window = window
        self._prompt_tokens = prompt_tokens
        self._max_tokens = max_tokens
        self._cap = answer_cap(max_tokens)
        self.assembler = StreamAssembler(reasoning_field=reasoning_field)
        self.chunks: list[Any] = []
        self.deadline: asyncio.Timeout | None = None  # armed by the client before the request is sent
        self.latest: float | None = None  # loop time the first token must come by (the call's retry budget)
        self._data_seen = False

    async def on_trace(self, name: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: once the request is sent, the first-token wait starts (so connecting and
        sending never eat into it, and a slow connect is bounded by httpx's connect timeout)."""
        if name.endswith("send_request_body.complete") and not self._data_seen and self.deadline is not None:
            when = asyncio.get_running_loop().time() + self._first
            self.deadline.reschedule(when if self.latest is None else min(when, self.latest))

    def _moved(self) -> None:
        """Data arrived: the next deadline is one idle timeout away."""
        self._data_seen = True
        if self.deadline is not None:
            self.deadline.reschedule(asyncio.get_running_loop().time() + self._idle)

    def timed_out(self) -> Exception:
        """The error for the client's deadline running out during this attempt."""
        if self._data_seen:
            return self._failure(self.assembler, f"no data for {self._idle:g}s (idle timeout)")
        if self.latest is not None and asyncio.get_running_loop().time() >= self.latest - _CLOCK_SLACK:
            # Cut by the call's retry budget, not by this server's first-token timeout: say so (the
            # client reports the error of the attempt before, when there was one).
            return BudgetSpent(f"{self._base_url}: no answer before the retry budget ran out",
                               detail="retry budget spent")
        reason = f"no answer within {self._first:g}s"
        if self._first_explicit:  # sized for this server on purpose: sending the same prompt again would not help
            size = f" for a prompt of about {self._prompt_tokens} tokens" if self._prompt_tokens else ""
            return CallTimeoutError(
                f"{self._base_url}: {reason}{size} (first-token timeout); a CPU server may need longer "
                "(models.NAME.first_token_timeout_seconds) or a shorter prompt", detail=reason)
        which = "idle timeout" if self._first_setting == "llm.idle_timeout_seconds" else "first-token timeout"
        return NetworkError(f"{self._base_url}: timed out: no data within {self._first:g}s of the request ({which}, "
                            f"{self._first_setting}; keep-alive comments do not count)", detail=reason)

    async def read(self, response: httpx.Response) -> Completion:
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return await self._read_body(response)
        assembler = self.assembler
        done = False
        try:
            async for event in EventSource(_Capped(response, self._cap)).aiter_sse():  # type: ignore[arg-type]
                self._moved()
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                if not event.data:
                    continue
                chunk = json.loads(event.data)
                if not isinstance(chunk, dict):
                    raise ValueError(f"a chunk is {type(chunk).__name__}, not an object")
                if chunk.get("error") and not chunk.get("choices"):  # an error sent inside a 200 stream
                    raise _StreamError(chunk["error"])
                self.chunks.append(compact_chunk(chunk) if self.chunks else chunk)
                for delta in assembler.feed(chunk):
                    await self._deliver(delta)
        except _StreamError as exc:
            raise self._failure(assembler, f"the server sent an error in the stream: {exc.message}") from None
        except _TooLarge:
            raise self._too_large(assembler) from None
        except MalformedChunk as exc:
            raise self._failure(assembler, f"malformed chunk in the stream: {exc}") from exc
        except ValueError as exc:  # json.JSONDecodeError
            raise self._failure(assembler, f"malformed JSON in the stream: {exc}") from exc
        except (TypeError, AttributeError, KeyError) as exc:  # a shape nothing above foresaw: still a typed error
            raise self._failure(assembler, f"malformed chunk in the stream: {exc!r}") from exc
        except httpx.HTTPError as exc:
            if (whole := self.whole()) is not None:
                return whole
            raise self._failure(assembler, str(exc) or type(exc).__name__, exc) from exc
        if not done:
            if not assembler.has_data and not self.chunks:
                raise self._empty_stream()
            if assembler.finish_reason is None:
                raise self._failure(assembler, "the stream ended without [DONE] and without a finish_reason")
            # Finished (a finish_reason came) but no [DONE]: some servers end the stream that way.
        elif assembler.finish_reason is None:
            # `[DONE]` only ends the stream; the model says it is done with a finish_reason. Without one
            # (a proxy or server that cut the answer and still closed the stream politely) the answer
            # may stop mid-word or mid-diff: never taken for a whole one.
            raise self._failure(assembler, "the stream ended with [DONE] but without a finish_reason, so the "
                                           "answer may be cut short")
        return assembler.result()

    def whole(self) -> Completion | None:
        """The answer, when the stream broke or stalled after its finish chunk: the model had said all it
        meant to, only the usage chunk or `[DONE]` was lost (usage is then counted locally)."""
        if self.assembler.finish_reason is None:
            return None
        return self.assembler.result()

    def _empty_stream(self) -> Exception:
        """200 and an empty stream: what servers send when the prompt is over their context window."""
        size = f"about {self._prompt_tokens} tokens" if self._prompt_tokens else "the prompt"
        window = f"{self._window} tokens" if self._window else "its configured window"
        return ContextLengthError(
            f"{self._base_url} accepted the request but sent an empty answer (HTTP 200, no data): servers do this "
            f"when the prompt ({size}) exceeds their context window. Check the server's context size (llama.cpp: "
            f"--ctx-size / n_ctx) against the model's context_window ({window})",
            detail="empty 200 stream",
        )

    async def _read_body(self, response: httpx.Response) -> Completion:
        # While thinking, the API keeps a non-streamed answer alive with blank lines: any bytes move the
        # deadline here (there is no data event to wait for), the total-time cap still bounds the call.
        raw = bytearray()
        try:
            async for piece in response.aiter_bytes():
                raw.extend(piece)
                if len(raw) > self._cap:
                    raise self._too_large(None)
                self._moved()
            body = json.loads(bytes(raw))
        except httpx.HTTPError as exc:
            raise error_from_transport(exc, self._base_url) from exc
        except ValueError as exc:
            kind = response.headers.get("content-type", "no content-type").split(";")[0].strip()
            page = html_page_text(bytes(raw[:ERROR_BODY_BYTES]).decode("utf-8", "replace"))
            said = f" (page: {page})" if page else ""
            raise ServerError(
                f"{self._base_url} answered {kind} that is not the API's JSON{said}: check the base URL (a proxy, a "
                f"login page or a web site answers there?)", detail=str(exc)) from exc
        if not isinstance(body, dict):
            raise ServerError(f"the API sent a JSON {type(body).__name__}, not an object")
        if body.get("error") and not body.get("choices"):
            raise ServerError(f"the API sent an error with status 200: {_StreamError(body['error']).message}")
        self.chunks.append(body)
        try:
            completion = completion_from_body(body, reasoning_field=self.assembler.reasoning_field)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise ServerError(f"the API sent a malformed answer: {exc}", detail=str(exc)) from exc
        if completion.finish_reason is None:  # as for a stream: only a finish_reason says it is whole
            reason = "the answer has no finish_reason, so it may be cut short; nothing of it is used"
            raise InterruptedResponse(f"{self._base_url}: {reason}", partial=completion, detail=reason)
        for kind, text in (("reasoning", completion.reasoning_content), ("content", completion.content)):
            if text:
                await self._deliver(StreamDelta(kind=kind, text=text))
        return completion

    async def _deliver(self, delta: StreamDelta) -> None:
        self._on_first_delta()
        if self._on_delta is not None:
            result = self._on_delta(delta)
            if inspect.isawaitable(result):
                await result

    def _too_large(self, assembler: StreamAssembler | None) -> Exception:
        """Not retried: a server that ignores the output limit would do it again."""
        reason = (f"the answer passed {self._cap / 2**20:g} MiB, far more than max_tokens ({self._max_tokens}) allows: "
                  "the server does not keep to the output limit; stopped there")
        error = (self._failure(assembler, reason) if assembler is not None
                 else ServerError(f"{self._base_url}: {reason}", detail=reason))
        error.retryable = False
        return error

    def _failure(self, assembler: StreamAssembler, reason: str, exc: httpx.HTTPError | None = None) -> Exception:
        if assembler.has_data:
            return InterruptedResponse(
                f"the answer from {self._base_url} was interrupted after {assembler.chunks} chunks: {reason}",
                partial=assembler.result(), detail=reason,
            )
        if exc is not None:
            return error_from_transport(exc, self._base_url)
        error_type = NetworkError if "timeout" in reason or "ended" in reason else ServerError
        return error_type(f"{self._base_url}: {reason}", detail=reason)


class _StreamError(Exception):
    def __init__(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else error
        self.message = str(message)[:300]
        super().__init__(self.message)
