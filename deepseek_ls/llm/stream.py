"""Read one HTTP answer (SSE stream or JSON body) into a `Completion`.

The idle timeout is ours, not httpx's: `: keep-alive` comments are not events
(httpx-sse skips them), so only real data moves the deadline and a server that
sends nothing but keep-alives still times out. A failure after data has flowed
is an `InterruptedResponse` carrying what arrived; before that it is a
retryable error.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from httpx_sse import EventSource

from deepseek_ls.llm.assembly import StreamAssembler, completion_from_body
from deepseek_ls.llm.errors import InterruptedResponse, NetworkError, ServerError
from deepseek_ls.llm.http_errors import error_from_transport
from deepseek_ls.llm.types import Completion, StreamDelta

DeltaCallback = Callable[[StreamDelta], Awaitable[None] | None]


# Repeated in every chunk and useless for replay once the first chunk has them.
_ENVELOPE = ("id", "object", "created", "model", "system_fingerprint")


def compact_chunk(chunk: dict[str, Any]) -> dict[str, Any]:
    """A chunk as recorded in `LLMCall@v1` after the first: without the repeated envelope."""
    return {key: value for key, value in chunk.items() if key not in _ENVELOPE}


class StreamReader:
    """Consumes one 200 response. `chunks` keeps the raw chunks for the event log."""

    def __init__(self, *, base_url: str, idle_timeout: float, on_delta: DeltaCallback | None,
                 on_first_delta: Callable[[], None]) -> None:
        self._base_url = base_url
        self._idle = idle_timeout
        self._on_delta = on_delta
        self._on_first_delta = on_first_delta
        self.chunks: list[Any] = []

    async def read(self, response: httpx.Response) -> Completion:
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return await self._read_body(response)
        assembler = StreamAssembler()
        done = False
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._idle) as deadline:
                async for event in EventSource(response).aiter_sse():
                    deadline.reschedule(loop.time() + self._idle)
                    if event.data.strip() == "[DONE]":
                        done = True
                        break
                    if not event.data:
                        continue
                    chunk = json.loads(event.data)
                    self.chunks.append(compact_chunk(chunk) if self.chunks else chunk)
                    for delta in assembler.feed(chunk):
                        await self._deliver(delta)
        except TimeoutError:
            raise self._failure(assembler, f"no data for {self._idle:g}s (idle timeout)") from None
        except ValueError as exc:  # json.JSONDecodeError
            raise self._failure(assembler, f"malformed JSON in the stream: {exc}") from exc
        except httpx.HTTPError as exc:
            raise self._failure(assembler, str(exc) or type(exc).__name__, exc) from exc
        if not done:
            raise self._failure(assembler, "the stream ended without [DONE]")
        return assembler.result()

    async def _read_body(self, response: httpx.Response) -> Completion:
        # While thinking, the API keeps a non-streamed answer alive with blank lines; httpx's read
        # timeout (llm.idle_timeout_seconds between any bytes) bounds the wait.
        try:
            body = json.loads(await response.aread())
        except httpx.HTTPError as exc:
            raise error_from_transport(exc, self._base_url) from exc
        except ValueError as exc:
            raise ServerError(f"the API sent a body that is not JSON: {exc}") from exc
        self.chunks.append(body)
        completion = completion_from_body(body)
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
