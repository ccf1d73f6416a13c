"""What a model call returns: `Completion`, with its `Usage` and `ToolCall`s; `StreamDelta`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Usage(BaseModel):
    """Token counts as DeepSeek reports them (other fields a server sends are kept).

    Servers differ: a field may be null (`completion_tokens_details: null`),
    OpenAI-style servers report cached prompt tokens as
    `prompt_tokens_details.cached_tokens`, and a server may report nothing, in
    which case the client counts for itself and sets `estimated`.
    """

    model_config = ConfigDict(extra="allow")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_cache_hit_tokens: int = 0
    prompt_cache_miss_tokens: int = 0
    completion_tokens_details: dict[str, Any] = Field(default_factory=dict)
    estimated: bool = False  # counted locally: the server reported no usage

    @model_validator(mode="before")
    @classmethod
    def _tolerate(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return {}
        data = {k: v for k, v in data.items() if v is not None}
        for name in _COUNTS:  # a server's garbage never fails an answer nor makes a cost negative
            if name in data:
                data[name] = _count(data[name])
        details = data.get("prompt_tokens_details")
        if "prompt_cache_hit_tokens" not in data and isinstance(details, dict) and details.get("cached_tokens"):
            data["prompt_cache_hit_tokens"] = _count(details["cached_tokens"])
        if not isinstance(data.get("completion_tokens_details", {}), dict):
            data.pop("completion_tokens_details")
        return data

    @field_validator(
        "prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
        "prompt_cache_miss_tokens", "completion_tokens_details", mode="before",
    )
    @classmethod
    def _null_is_absent(cls, value: Any, info: Any) -> Any:
        # Several OpenAI-compatible servers send `"completion_tokens_details": null` (or null counts).
        if value is None:
            return {} if info.field_name == "completion_tokens_details" else 0
        return value

    @property
    def reasoning_tokens(self) -> int:
        return _count(self.completion_tokens_details.get("reasoning_tokens"))

    @property
    def cache_miss_tokens(self) -> int:
        """Prompt tokens billed as a cache miss (servers without cache fields: every prompt token)."""
        if self.prompt_cache_miss_tokens:
            return self.prompt_cache_miss_tokens
        return max(self.prompt_tokens - self.prompt_cache_hit_tokens, 0)


_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens", "prompt_cache_miss_tokens")


def _count(value: Any) -> int:
    """A token count as a server reported it: a whole number >= 0; anything else (text, negative, bool) is 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


class FunctionCall(BaseModel):
    name: str = ""
    arguments: str = ""  # JSON text as the model wrote it; parse at the tool boundary


class ToolCall(BaseModel):
    id: str = ""
    type: Literal["function"] = "function"
    function: FunctionCall = Field(default_factory=FunctionCall)


@dataclass(frozen=True, slots=True)
class StreamDelta:
    """One piece of streamed text passed to `on_delta` as it arrives (a plain dataclass: it is made per chunk)."""

    kind: Literal["content", "reasoning"]
    text: str


class Completion(BaseModel):
    """The assembled answer of one call, streamed or not."""

    content: str = ""
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    profile: str = ""
    role: str = ""
    ttft_ms: float | None = None  # call start -> first content or reasoning delivered
    total_ms: float | None = None
    retries: int = 0
    chunks: int = 0  # number of stream chunks assembled (1 for a non-streamed answer)

    def message(self) -> dict[str, Any]:
        """This answer as an assistant message for the next request's history.

        `reasoning_content` is kept here; `history.prepare_messages` decides
        whether it is sent (only for tool-call turns in thinking mode).
        """
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            message["tool_calls"] = [call.model_dump() for call in self.tool_calls]
        return message
