"""What the agent does with an answer that did not finish normally (`finish_reason`).

Only `stop` and `tool_calls` mean "the model said all it meant to". The others:

* `length` — the answer hit the output limit. Its text is continued: the
  partial answer goes back as an assistant turn followed by a "continue" user
  turn (this works with every OpenAI-compatible server), and the pieces are
  joined. At most `agent_loop.max_continuations` times; then the call stops
  honestly. A tool call cut by the limit is not run (its JSON is incomplete):
  the model is asked once to answer again, shorter.
* `insufficient_system_resource` (DeepSeek: the inference system ran out of
  capacity mid-answer) — the same request is sent again after a backoff, at
  most `agent_loop.resource_retries` times; then the call stops honestly.
* `content_filter` — the provider's filter cut the answer. Resending the same
  request gets the same result, so the call stops at once, saying so.

A stop raises `AnswerIncomplete`: nothing of a partial answer is parsed, staged
or applied. Every decision is a `FinishReasonHandled@v1` event and a status
line for the person.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from deepseek_ls.llm.types import Completion, Usage

DONE = {"stop", "tool_calls", "function_call", None, ""}

CONTINUE_PROMPT = (
    "Your previous answer was cut off by the output limit. Continue it exactly where it stops: "
    "write only the missing rest, starting with the very next character. Do not repeat anything, "
    "do not add a preamble, keep the same format (the same fence, the same diff)."
)
SHORTER_PROMPT = (
    "Your previous answer (a tool call) was cut off by the output limit, so it was not run. "
    "Answer again with a shorter one: fewer or smaller hunks, or split the change."
)


class AnswerIncomplete(Exception):
    """The model's answer stayed incomplete after the policy above; the message says why and what to do."""

    def __init__(self, message: str, finish_reason: str) -> None:
        super().__init__(message)
        self.finish_reason = finish_reason


Call = Callable[[list[dict[str, Any]]], Awaitable[Completion]]
Notice = Callable[[str, dict[str, Any]], None]


async def complete_whole(
    call: Call,
    messages: list[dict[str, Any]],
    *,
    role: str,
    max_continuations: int,
    resource_retries: int,
    backoff_seconds: float,
    notice: Notice,
) -> Completion:
    """`call(messages)`, continued or retried until the answer is whole; raises `AnswerIncomplete`."""
    completion = await call(messages)
    continued = retried = shortened = 0
    while completion.finish_reason not in DONE:
        reason = str(completion.finish_reason)
        chars = len(completion.content)
        if reason == "length" and completion.tool_calls:
            if shortened >= 1:
                _stop(notice, role, reason, chars, "a tool call was cut off by the output limit twice")
            shortened += 1
            notice("retry", _payload(role, reason, shortened, chars, "a tool call was cut off; asked for a shorter answer"))
            completion = await call([*messages, completion.message(), *_tool_stubs(completion),
                                     {"role": "user", "content": SHORTER_PROMPT}])
            continue
        if reason == "length":
            if continued >= max_continuations:
                _stop(notice, role, reason, chars,
                      f"the answer was still cut off by the output limit after {continued} continuation(s) "
                      "(agent_loop.max_continuations); nothing of it was used. Ask for a smaller change, "
                      "or raise max_tokens of the model profile")
            continued += 1
            notice("continue", _payload(role, reason, continued, chars, "the answer hit the output limit; asking the model to continue"))
            partial = completion.content
            more = await call([*messages, {"role": "assistant", "content": partial},
                               {"role": "user", "content": CONTINUE_PROMPT}])
            completion = _joined(completion, more)
            continue
        if reason == "insufficient_system_resource":
            if retried >= resource_retries:
                _stop(notice, role, reason, chars,
                      f"the model's server ran out of resources mid-answer {retried + 1} time(s) "
                      "(agent_loop.resource_retries); nothing of the answer was used. Try again later")
            retried += 1
            notice("retry", _payload(role, reason, retried, chars, "the server ran out of resources mid-answer; sending the request again"))
            await asyncio.sleep(backoff_seconds * (2 ** (retried - 1)))
            completion = await call(messages)
            continue
        if reason == "content_filter":
            _stop(notice, role, reason, chars,
                  "the provider's content filter stopped the answer; the same request would be filtered again, "
                  "so nothing of it was used. Rephrase the request or leave the filtered material out of the context")
        _stop(notice, role, reason, chars, f"the answer ended with an unknown finish_reason {reason!r}; nothing of it was used")
    return completion


def _joined(first: Completion, more: Completion) -> Completion:
    """The partial answer followed by its continuation (an overlap the model repeated is dropped once)."""
    head, tail = first.content, more.content
    overlap = _overlap(head, tail)
    usage = Usage(
        prompt_tokens=first.usage.prompt_tokens + more.usage.prompt_tokens,
        completion_tokens=first.usage.completion_tokens + more.usage.completion_tokens,
        total_tokens=first.usage.total_tokens + more.usage.total_tokens,
        prompt_cache_hit_tokens=first.usage.prompt_cache_hit_tokens + more.usage.prompt_cache_hit_tokens,
        prompt_cache_miss_tokens=first.usage.prompt_cache_miss_tokens + more.usage.prompt_cache_miss_tokens,
    )
    return more.model_copy(update={
        "content": head + tail[overlap:],
        "reasoning_content": first.reasoning_content if more.reasoning_content is None else more.reasoning_content,
        "usage": usage,
        "total_ms": (first.total_ms or 0.0) + (more.total_ms or 0.0),
        "chunks": first.chunks + more.chunks,
    })


def _overlap(head: str, tail: str, limit: int = 400) -> int:
    """Length of the longest suffix of `head` (at least one whole line's worth) that `tail` starts with."""
    for size in range(min(len(head), len(tail), limit), 15, -1):
        if head.endswith(tail[:size]):
            return size
    return 0


def _tool_stubs(completion: Completion) -> list[dict[str, Any]]:
    # The API requires an answer to every tool call before the next user turn.
    return [{"role": "tool", "tool_call_id": c.id, "content": '{"ok": false, "error": "cut off by the output limit; not run"}'}
            for c in completion.tool_calls]


def _payload(role: str, reason: str, attempt: int, chars: int, detail: str) -> dict[str, Any]:
    return {"role": role, "finish_reason": reason, "attempt": attempt, "partial_chars": chars, "detail": detail}


def _stop(notice: Notice, role: str, reason: str, chars: int, detail: str) -> None:
    notice("stop", _payload(role, reason, 0, chars, detail))
    raise AnswerIncomplete(f"{role}: {detail}", reason)
