"""Assemble a streamed chat completion from its chunks, whatever OpenAI-compatible server sent them.

Chunks are the parsed `data:` objects of the SSE stream. Text deltas are
appended; reasoning comes as `reasoning_content` (DeepSeek) or `reasoning`
(Ollama, vLLM). Tool-call deltas are merged by `index` (any numbers, or none:
a delta without an index continues the last call unless it brings a new id; a
new id under an index already in use begins a new call);
the first delta of a call carries its id and function name, later ones argument
fragments — a server that repeats the name in every chunk (llama.cpp) does not
get it glued. `usage` may come in any chunk (the last one that has it wins), be
missing, or hold nulls. `choices` may be empty or null.

A part of the answer of the wrong type (a delta that is a string, content that
is a number, a tool call that is not an object) is a `MalformedChunk`: skipping
it would hand the caller a garbled answer as a whole one. Metadata of the wrong
type (`model`, a tool call's numeric `id`) is taken as text or ignored.
"""

from __future__ import annotations

import json
from typing import Any

from deepseek_ls.llm.types import Completion, FunctionCall, StreamDelta, ToolCall, Usage


class MalformedChunk(ValueError):
    """A chunk whose answer-bearing part has the wrong type."""


def _expect(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """`value` if it is of `kind` or None; else the chunk is malformed."""
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    raise MalformedChunk(f"{what} is {type(value).__name__}: {json.dumps(value, default=str)[:80]}")


def _reasoning(delta: dict[str, Any], preferred: str) -> str | None:
    """The reasoning text of a delta or message, under either field name."""
    value = delta.get(preferred)
    if value is None:
        value = delta.get("reasoning" if preferred == "reasoning_content" else "reasoning_content")
    return _expect(value, str, "reasoning")


def _arguments(value: Any) -> str:
    """Tool-call arguments as JSON text (a few servers send an object)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(_expect(value, dict, "tool-call arguments"), ensure_ascii=False)


class StreamAssembler:
    def __init__(self, *, reasoning_field: str = "reasoning_content") -> None:
        self.reasoning_field = reasoning_field
        self._content: list[str] = []
        self._reasoning: list[str] | None = None
        self._calls: list[ToolCall] = []  # in the order they began
        self._slot: dict[int, int] = {}  # the server's `index` -> the call it now continues
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""
        self.chunks = 0

    def feed(self, chunk: dict[str, Any]) -> list[StreamDelta]:
        """Take one chunk; return the text deltas it carried, in order (reasoning first)."""
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), dict) and chunk["usage"]:
            self.usage = Usage.model_validate(chunk["usage"])
        deltas: list[StreamDelta] = []
        for choice in _expect(chunk.get("choices"), list, "choices") or []:
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue  # n > 1 is never requested
            delta = _expect(choice.get("delta") or choice.get("message"), dict, "a delta") or {}
            reasoning = _reasoning(delta, self.reasoning_field)
            if reasoning is not None:
                if self._reasoning is None:
                    self._reasoning = []
                if reasoning:
                    self._reasoning.append(reasoning)
                    deltas.append(StreamDelta(kind="reasoning", text=reasoning))
            content = _expect(delta.get("content"), str, "content")
            if content:
                self._content.append(content)
                deltas.append(StreamDelta(kind="content", text=content))
            for call_delta in _expect(delta.get("tool_calls"), list, "tool_calls") or []:
                self._merge_call(_expect(call_delta, dict, "a tool call") or {})
            if _expect(choice.get("finish_reason"), str, "finish_reason"):
                self.finish_reason = choice["finish_reason"]
        self.chunks += 1  # counted once whole: a malformed first chunk leaves nothing delivered
        return deltas

    def _merge_call(self, delta: dict[str, Any]) -> None:
        index = delta.get("index")
        call_id = str(delta["id"]) if delta.get("id") and isinstance(delta["id"], (str, int)) else None
        if not isinstance(index, int) or isinstance(index, bool):
            last = self._calls[-1] if self._calls else None
            call = last if last is not None and (call_id is None or call_id == last.id) else self._begin()
        else:
            # A new id under an index already in use is a new call (servers that send index 0 for
            # every parallel call): glued on, two calls would become one with unparsable arguments.
            slot = self._slot.get(index)
            call = self._calls[slot] if slot is not None else None
            if call is None or (call_id is not None and call.id and call_id != call.id):
                call = self._begin()
                self._slot[index] = len(self._calls) - 1
        if call_id is not None:
            call.id = call_id
        function = _expect(delta.get("function"), dict, "a tool call's function") or {}
        name = _expect(function.get("name"), str, "a tool name")
        if name:
            if not call.function.name or name.startswith(call.function.name):
                call.function.name = name  # the first piece, or the whole name again (llama.cpp) or a longer one
            elif not call.function.name.endswith(name):
                call.function.name += name  # a genuine fragment
        call.function.arguments += _arguments(function.get("arguments"))

    def _begin(self) -> ToolCall:
        self._calls.append(ToolCall())
        return self._calls[-1]

    @property
    def has_data(self) -> bool:
        return self.chunks > 0

    def result(self) -> Completion:
        calls = [call.model_copy(deep=True) for call in self._calls]
        for number, call in enumerate(calls):  # a tool result must name its call: give id-less calls one
            if not call.id:
                call.id = f"call_{number}"
        return Completion(
            content="".join(self._content),
            reasoning_content=None if self._reasoning is None else "".join(self._reasoning),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage or Usage(),
            model=self.model,
            chunks=self.chunks,
        )


def completion_from_body(body: dict[str, Any], *, reasoning_field: str = "reasoning_content") -> Completion:
    """A non-streamed `chat.completion` body as a `Completion` (nulls and missing parts tolerated)."""
    choices = [c for c in _expect(body.get("choices"), list, "choices") or [] if isinstance(c, dict)] or [{}]
    message = _expect(choices[0].get("message"), dict, "the message") or {}
    calls = []
    for number, c in enumerate(_expect(message.get("tool_calls"), list, "tool_calls") or []):
        c = _expect(c, dict, "a tool call") or {}
        function = _expect(c.get("function"), dict, "a tool call's function") or {}
        call_id = c.get("id") if isinstance(c.get("id"), (str, int)) and c.get("id") else f"call_{number}"
        calls.append(ToolCall(id=str(call_id),
                              function=FunctionCall(name=_expect(function.get("name"), str, "a tool name") or "",
                                                    arguments=_arguments(function.get("arguments")))))
    usage = body.get("usage")
    return Completion(
        content=_expect(message.get("content"), str, "content") or "",
        reasoning_content=_reasoning(message, reasoning_field),
        tool_calls=calls,
        finish_reason=_expect(choices[0].get("finish_reason"), str, "finish_reason"),
        usage=Usage.model_validate(usage if isinstance(usage, dict) else {}),
        model=body.get("model") if isinstance(body.get("model"), str) else "",
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
