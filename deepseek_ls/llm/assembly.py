"""Assemble a streamed chat completion from its chunks.

Chunks are the parsed `data:` objects of the SSE stream. Text deltas are
appended; tool-call deltas are merged by `index` (the first delta of a call
carries its id and function name, later ones argument fragments); `usage` may
come in the chunk with `finish_reason` or in a final chunk with no choices.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.llm.types import Completion, FunctionCall, StreamDelta, ToolCall, Usage


class StreamAssembler:
    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] | None = None
        self._calls: dict[int, ToolCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""
        self.chunks = 0

    def feed(self, chunk: dict[str, Any]) -> list[StreamDelta]:
        """Take one chunk; return the text deltas it carried, in order (reasoning first)."""
        self.chunks += 1
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = Usage.model_validate(chunk["usage"])
        deltas: list[StreamDelta] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # n > 1 is never requested
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content")
            if reasoning is not None:
                if self._reasoning is None:
                    self._reasoning = []
                if reasoning:
                    self._reasoning.append(reasoning)
                    deltas.append(StreamDelta(kind="reasoning", text=reasoning))
            content = delta.get("content")
            if content:
                self._content.append(content)
                deltas.append(StreamDelta(kind="content", text=content))
            for call_delta in delta.get("tool_calls") or []:
                self._merge_call(call_delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return deltas

    def _merge_call(self, delta: dict[str, Any]) -> None:
        index = int(delta.get("index", len(self._calls)))
        call = self._calls.setdefault(index, ToolCall())
        if delta.get("id"):
            call.id = delta["id"]
        function = delta.get("function") or {}
        if function.get("name"):
            call.function.name += function["name"]
        if function.get("arguments"):
            call.function.arguments += function["arguments"]

    @property
    def has_data(self) -> bool:
        return self.chunks > 0

    def result(self) -> Completion:
        return Completion(
            content="".join(self._content),
            reasoning_content=None if self._reasoning is None else "".join(self._reasoning),
            tool_calls=[self._calls[i] for i in sorted(self._calls)],
            finish_reason=self.finish_reason,
            usage=self.usage or Usage(),
            model=self.model,
            chunks=self.chunks,
        )


def completion_from_body(body: dict[str, Any]) -> Completion:
    """A non-streamed `chat.completion` body as a `Completion`."""
    choices = body.get("choices") or [{}]
    message = choices[0].get("message") or {}
    calls = [
        ToolCall(id=c.get("id", ""), function=FunctionCall(**(c.get("function") or {})))
        for c in message.get("tool_calls") or []
    ]
    return Completion(
        content=message.get("content") or "",
        reasoning_content=message.get("reasoning_content"),
        tool_calls=calls,
        finish_reason=choices[0].get("finish_reason"),
        usage=Usage.model_validate(body.get("usage") or {}),
        model=body.get("model", ""),
        chunks=1,
    )


def completion_from_chunks(chunks: list[dict[str, Any]]) -> Completion:
    """Rebuild a recorded answer (`LLMCall@v1` `chunks`): stream chunks or one JSON body."""
    if len(chunks) == 1 and any("message" in c for c in chunks[0].get("choices") or []):
        return completion_from_body(chunks[0])
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.result()
