"""The LLM client: DeepSeek / OpenAI-compatible chat completions with profiles, streaming and retries."""

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

__all__ = [
    "ROLE_HEADER",
    "AuthError",
    "BadRequestError",
    "BalanceError",
    "CallTimeoutError",
    "Completion",
    "ContextLengthError",
    "InterruptedResponse",
    "LLMClient",
    "LLMError",
    "NetworkError",
    "RateLimitError",
    "ServerError",
    "StreamDelta",
    "ToolCall",
    "Usage",
]
