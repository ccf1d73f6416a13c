"""The LLM client: DeepSeek / OpenAI-compatible chat completions with profiles, streaming and retries.

The names below are loaded on first use (PEP 562), so importing a light submodule such as
`deepseek_ls.llm.budget` (the `sessions` command's costs) does not load httpx and the client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "ROLE_HEADER": "client", "LLMClient": "client",
    **{name: "errors" for name in ("AuthError", "BadRequestError", "BalanceError", "CallTimeoutError",
                                   "ContextLengthError", "InterruptedResponse", "LLMError", "NetworkError",
                                   "RateLimitError", "ServerError")},
    **{name: "types" for name in ("Completion", "StreamDelta", "ToolCall", "Usage")},
}
__all__ = sorted(_WHERE)

if TYPE_CHECKING:
    from deepseek_ls.llm.client import ROLE_HEADER, LLMClient
    from deepseek_ls.llm.errors import (
        AuthError,
        BadRequestError,
        BalanceError,
        CallTimeoutError,
        ContextLengthError,
        InterruptedResponse,
        LLMError,
        NetworkError,
        RateLimitError,
        ServerError,
    )
    from deepseek_ls.llm.types import Completion, StreamDelta, ToolCall, Usage


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'deepseek_ls.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"deepseek_ls.llm.{module}"), name)
    globals()[name] = value
    return value
