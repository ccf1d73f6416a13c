"""The thinking-mode history rule for `reasoning_content`.

DeepSeek's thinking mode requires the `reasoning_content` of every assistant
turn that made tool calls to be sent back in all later requests (else 400:
"The reasoning_content in the thinking mode must be passed back to the API").
Reasoning of turns without tool calls is not part of the context and is
dropped, as it is everywhere when thinking is off.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def prepare_messages(messages: Iterable[Mapping[str, Any]], *, thinking: bool) -> list[dict[str, Any]]:
    """Copy `messages` for a request, keeping `reasoning_content` only where the API needs it."""
    prepared: list[dict[str, Any]] = []
    for original in messages:
        message = dict(original.model_dump(exclude_none=True) if hasattr(original, "model_dump") else original)
        reasoning = message.pop("reasoning_content", None)
        if message.get("role") == "assistant" and message.get("tool_calls") and thinking:
            # An empty reasoning must still be sent: the API rejects a missing field.
            message["reasoning_content"] = reasoning or ""
        prepared.append(message)
    return prepared
