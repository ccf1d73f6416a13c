"""The fake DeepSeek server's script: an ordered list of scripted replies.

A request is answered by the first reply, in script order, that is still
available and whose `match` fits the request. A reply is used once unless it
says ``repeat: true``. When nothing matches, the server answers 500 with a body
saying "no scripted reply matched" and what the request looked like, so a
failing test says why. The format is documented in ``docs/testing.md``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Match(_Model):
    """Which requests a reply answers. Every given field must fit."""

    role: str | None = None  # the X-DeepSeek-LS-Role header
    model: str | None = None
    contains: str | None = None  # substring of the last *user* message
    last_contains: str | None = None  # substring of the last message, any role (e.g. a tool result)
    last_role: str | None = None  # role of the last message: "user" | "tool" | ...
    has_tools: bool | None = None  # whether the request offered tools
    endpoint: str | None = None  # "chat" (default), "fim" (/beta/completions) or "infill" (llama.cpp's /infill)


class Fault(_Model):
    """What goes wrong while answering. Several can combine."""

    status: int | None = None  # answer this HTTP status instead of a completion
    body: Any = None  # the error body (str or JSON); a DeepSeek-style error by default
    retry_after: float | None = None  # seconds, sent as `Retry-After`
    retry_after_ms: int | None = None  # sent as `retry-after-ms`
    delay_before_first_byte: float = 0.0  # seconds before the status line
    hold: str | None = None  # answer only once the test releases this name (`FakeDeepSeek.release`)
    keepalives: int = 0  # `: keep-alive` comments sent before the first data chunk
    keepalive_interval: float = 0.05  # seconds between those comments
    keepalive_forever: bool = False  # only ever send keep-alives (the client must time out)
    cut_after_chunks: int | None = None  # close the connection after N data chunks
    malformed_at_chunk: int | None = None  # chunk N (0-based) is invalid JSON
    drop_connection: bool = False  # close the socket without any response
    close_after: bool = False  # answer, then close the connection it kept alive (an idle timeout's close)
    empty_stream: bool = False  # 200 and a stream with no data at all (llama.cpp when the prompt is too long)
    reject_params: list[str] = Field(default_factory=list)  # 400 naming the first of these the request carries
    # Hostile servers (tests/unit/llm/test_always_answers_hostile_streams.py and its neighbours):
    headers: dict[str, str] = Field(default_factory=dict)  # extra response headers (Location, a raw Retry-After)
    content_type: str | None = None  # of a `status` answer's body (e.g. "text/html"); `body` is then sent as is
    cut_with: Literal["close", "stall", "keepalives"] = "close"  # what `cut_after_chunks` does: close the
    # connection without ending the body, send nothing more, or only `: keep-alive` comments, forever
    raw_events: list[str] | None = None  # written as is (one write each) instead of the generated chunks
    flood: str | None = None  # after the chunks (or raw_events), written again and again until the client leaves


class Shape(_Model):
    """How an OpenAI-compatible server that is not DeepSeek shapes the same answer."""

    # where usage comes: its own last chunk (DeepSeek), the finish chunk, nowhere, or with null details
    usage: Literal["last_chunk", "finish_chunk", "none", "nulls"] = "last_chunk"
    reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"  # Ollama: "reasoning"
    tool_index_base: int = 0  # first tool call's `index` (1: odd indices some servers send)
    omit_tool_index: bool = False  # continuation deltas carry no `index`
    repeat_tool_name: bool = False  # id and function name in every tool-call chunk (llama.cpp)
    empty_choices: bool = False  # `"choices": []` chunks between the deltas
    no_done: bool = False  # the stream ends after the finish chunk without `data: [DONE]`


class ToolCallSpec(_Model):
    id: str | None = None  # generated (`call_<n>`) when absent
    name: str
    arguments: Any = Field(default_factory=dict)  # dict (sent as JSON) or a raw string

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class Reply(_Model):
    """One scripted answer."""

    match: Match = Field(default_factory=Match)
    repeat: bool = False
    content: str = ""
    reasoning_content: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" when tool calls, else "stop"
    usage: dict[str, Any] | None = None  # overrides the computed usage fields
    chunk_chars: int = Field(default=8, ge=1)  # characters of text per streamed chunk
    chunk_delay: float = Field(default=0.0, ge=0)  # seconds between streamed chunks
    write_bytes: int | None = Field(default=None, ge=1)  # split each socket write (UTF-8 tests)
    ignore_stream: bool = False  # answer one JSON body even to `stream: true`, like some compatible servers
    fault: Fault | None = None
    shape: Shape = Field(default_factory=Shape)


def _last(messages: list[dict[str, Any]], role: str | None = None) -> dict[str, Any] | None:
    for message in reversed(messages):
        if role is None or message.get("role") == role:
            return message
    return None


def _text(message: dict[str, Any] | None) -> str:
    if not message:
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def request_endpoint(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/infill"):
        return "infill"
    return "fim" if path.endswith("/beta/completions") else "chat"


def matches(match: Match, *, role: str | None, body: dict[str, Any], endpoint: str) -> bool:
    wanted_endpoint = match.endpoint or "chat"
    if wanted_endpoint != endpoint:
        return False
    if match.role is not None and match.role != role:
        return False
    if match.model is not None and match.model != body.get("model"):
        return False
    messages = body.get("messages") or []
    if endpoint == "fim":
        prompt = str(body.get("prompt", ""))
        return match.contains is None or match.contains in prompt
    if endpoint == "infill":
        return match.contains is None or match.contains in str(body.get("input_prefix", ""))
    if match.contains is not None and match.contains not in _text(_last(messages, "user")):
        return False
    if match.last_contains is not None and match.last_contains not in _text(_last(messages)):
        return False
    last = _last(messages)
    if match.last_role is not None and (last or {}).get("role") != match.last_role:
        return False
    if match.has_tools is not None and bool(body.get("tools")) != match.has_tools:
        return False
    return True


class Script:
    """Thread-safe ordered replies; `take` picks and consumes the reply for a request."""

    def __init__(self, replies: list[Reply | dict[str, Any]] | None = None) -> None:
        self._lock = threading.Lock()
        self._replies: list[Reply] = []
        self._used: list[bool] = []
        for reply in replies or []:
            self.add(reply)

    @classmethod
    def load(cls, path: Path) -> "Script":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if isinstance(data, dict):
            data = data.get("replies", [])
        return cls(data)

    def add(self, reply: Reply | dict[str, Any]) -> Reply:
        parsed = reply if isinstance(reply, Reply) else Reply.model_validate(reply)
        with self._lock:
            self._replies.append(parsed)
            self._used.append(False)
        return parsed

    def take(self, *, role: str | None, body: dict[str, Any], endpoint: str) -> tuple[int, Reply] | None:
        with self._lock:
            for index, reply in enumerate(self._replies):
                if self._used[index] and not reply.repeat:
                    continue
                if matches(reply.match, role=role, body=body, endpoint=endpoint):
                    self._used[index] = True
                    return index, reply
        return None

    def unused(self) -> list[Reply]:
        """Replies never served (a test can assert the scenario ran to its end)."""
        with self._lock:
            return [r for r, used in zip(self._replies, self._used) if not used]

    def __len__(self) -> int:
        with self._lock:
            return len(self._replies)
