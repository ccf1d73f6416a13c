"""Turn a scripted `Reply` into DeepSeek-shaped JSON: stream chunks or one body.

Also computes `usage` the way the real API reports it, with
`prompt_cache_hit_tokens` from the longest common prefix with earlier prompts
(about 4 characters a token), so the cost of our prompts can be measured.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any

from deepseek_ls.testkit.script import Reply

CHARS_PER_TOKEN = 4


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def prompt_text(body: dict[str, Any]) -> str:
    """The request as the model would see it, for token and cache accounting."""
    if "prompt" in body:
        return str(body.get("prompt", "")) + str(body.get("suffix") or "")
    if "input_prefix" in body or "input_suffix" in body:  # llama.cpp's /infill
        extra = "".join(str(c.get("text", "")) for c in body.get("input_extra") or [] if isinstance(c, dict))
        return extra + str(body.get("input_prefix", "")) + str(body.get("input_suffix", ""))
    parts = [json.dumps(body["tools"], sort_keys=True)] if body.get("tools") else []
    for message in body.get("messages") or []:
        parts.append(f"<|{message.get('role')}|>")
        if message.get("reasoning_content") and message.get("tool_calls"):
            parts.append(str(message["reasoning_content"]))
        content = message.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content, sort_keys=True))
        if message.get("tool_calls"):
            parts.append(json.dumps(message["tool_calls"], sort_keys=True))
    return "".join(parts)


class PromptCache:
    """Remembers earlier prompts; a new prompt's cache hit is its longest common prefix."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prompts: list[str] = []

    def hit_chars(self, prompt: str) -> int:
        with self._lock:
            best = max((_common_prefix(prompt, earlier) for earlier in self._prompts), default=0)
            self._prompts.append(prompt)
        return best

    def usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        prompt = prompt_text(body)
        prompt_tokens = tokens(prompt)
        hit = min(self.hit_chars(prompt) // CHARS_PER_TOKEN, prompt_tokens)
        reasoning_tokens = tokens(reply.reasoning_content or "")
        tool_text = "".join(c.name + c.arguments_text() for c in reply.tool_calls)
        completion_tokens = tokens(reply.content) + reasoning_tokens + tokens(tool_text)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_cache_hit_tokens": hit,
            "prompt_cache_miss_tokens": prompt_tokens - hit,
        }
        if reply.reasoning_content is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        usage.update(reply.usage or {})
        return usage


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix, by binary search over slice comparisons (done in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def tool_calls_json(reply: Reply, id_prefix: str) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id or f"{id_prefix}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_text()},
        }
        for index, call in enumerate(reply.tool_calls)
    ]


def chat_chunks(reply: Reply, *, envelope: dict[str, Any], usage: dict[str, Any], id_prefix: str) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed answer, shaped as `reply.shape` says.

    DeepSeek's shape: a role chunk, text deltas, tool calls (id and name in the first delta of
    each call, argument pieces after), the finish chunk, usage in a final chunk of its own.
    """
    shape = reply.shape

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **envelope,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(reply.reasoning_content or "", reply.chunk_chars):
        chunks.append(chunk({"content": None, shape.reasoning_field: piece}))
    for piece in _pieces(reply.content, reply.chunk_chars):
        chunks.append(chunk({"content": piece}))
    for number, call in enumerate(tool_calls_json(reply, id_prefix)):
        index = number + shape.tool_index_base
        head = {"index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        chunks.append(chunk({"tool_calls": [head]}))
        for piece in _pieces(call["function"]["arguments"], reply.chunk_chars):
            part: dict[str, Any] = {"function": {"arguments": piece}}
            if shape.repeat_tool_name:
                part = {"id": call["id"], "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": piece}}
            if not shape.omit_tool_index:
                part["index"] = index
            chunks.append(chunk({"tool_calls": [part]}))
    if shape.empty_choices:
        chunks = [c for original in chunks for c in (original, {**envelope, "object": "chat.completion.chunk",
                                                                 "choices": []})]
    finish = chunk({"content": ""}, finish_reason(reply))
    if shape.usage == "finish_chunk":
        finish["usage"] = usage
    chunks.append(finish)
    if shape.usage == "last_chunk":
        chunks.append({**envelope, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    elif shape.usage == "nulls":
        nulls = {**usage, "completion_tokens_details": None, "prompt_tokens_details": None,
                 "prompt_cache_hit_tokens": None}
        chunks.append({**envelope, "object": "chat.completion.chunk", "choices": None, "usage": nulls})
    return chunks


def chat_body(reply: Reply, *, envelope: dict[str, Any], usage: dict[str, Any], id_prefix: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning_content is not None:
        message[reply.shape.reasoning_field] = reply.reasoning_content
    if reply.tool_calls:
        message["tool_calls"] = tool_calls_json(reply, id_prefix)
    return {
        **envelope,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason(reply)}],
        **({} if reply.shape.usage == "none" else {"usage": usage}),
    }


def fim_chunks(reply: Reply, *, envelope: dict[str, Any], usage: dict[str, Any]) -> list[dict[str, Any]]:
    def chunk(text: str, finish: str | None = None) -> dict[str, Any]:
        return {**envelope, "object": "text_completion",
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish}]}

    chunks = [chunk(piece) for piece in _pieces(reply.content, reply.chunk_chars)]
    chunks.append(chunk("", finish_reason(reply)))
    chunks.append({**envelope, "object": "text_completion", "choices": [], "usage": usage})
    return chunks


def fim_body(reply: Reply, *, envelope: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    return {
        **envelope,
        "object": "text_completion",
        "choices": [{"index": 0, "text": reply.content, "logprobs": None, "finish_reason": finish_reason(reply)}],
        "usage": usage,
    }


def infill_body(reply: Reply, *, usage: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's `/infill` answer: the text and its own token counts."""
    return {"content": reply.content, "stop": True, "tokens_predicted": usage["completion_tokens"],
            "tokens_evaluated": usage["prompt_tokens"], "model": "local"}
