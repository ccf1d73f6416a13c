"""Request checks the fake server makes the way the real DeepSeek API does.

Each check returns an `ApiError` (status + DeepSeek-style body) or None. They
are deliberately limited to what matters to our client: auth, parameters,
message role order and the thinking-mode `reasoning_content` rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_ROLES = {"system", "user", "assistant", "tool"}
REASONING_RULE_MESSAGE = "The reasoning_content in the thinking mode must be passed back to the API."


@dataclass(frozen=True)
class ApiError:
    status: int
    message: str
    type: str = "invalid_request_error"
    raw: Any = None  # a scripted body sent as is

    def body(self) -> Any:
        if self.raw is not None:
            return self.raw
        return {"error": {"message": self.message, "type": self.type, "param": None, "code": self.type}}


def check_auth(authorization: str | None, api_key: str | None) -> ApiError | None:
    """401 when the bearer key is missing, or differs from the configured one."""
    scheme, _, key = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return ApiError(401, "Authentication Fails (no such user)", "authentication_error")
    if api_key is not None and key.strip() != api_key:
        masked = "*" * max(len(key) - 4, 0) + key[-4:]
        return ApiError(401, f"Authentication Fails, Your api key: {masked} is invalid", "authentication_error")
    return None


def thinking_enabled(body: dict[str, Any]) -> bool:
    """As the API decides: the explicit flag, else by legacy name, else on (the default).

    Only DeepSeek's models have a thinking mode here: a request for another model (the fake
    standing in for a local server) is never in it.
    """
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        return thinking["type"] == "enabled"
    model = str(body.get("model") or "")
    return model.startswith("deepseek") and model != "deepseek-chat"


def check_chat_body(body: Any) -> ApiError | None:
    """422 for malformed parameters, 400 for an invalid conversation."""
    if not isinstance(body, dict):
        return ApiError(422, "Invalid request body: expected a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return ApiError(422, "Failed to deserialize the JSON body: missing field `model`")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ApiError(422, "Failed to deserialize the JSON body: `messages` must be a non-empty list")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            return ApiError(
                422, f"messages[{index}]: unknown variant, expected one of {sorted(_ROLES)}"
            )
    return check_role_order(messages) or check_reasoning_rule(body)


def check_role_order(messages: list[dict[str, Any]]) -> ApiError | None:
    pending_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending_ids:
                return ApiError(
                    400,
                    f"Messages with role 'tool' must be a response to a preceding message with "
                    f"'tool_calls' (messages[{index}], tool_call_id={call_id!r})",
                )
            pending_ids.discard(call_id)
            continue
        if pending_ids:
            return ApiError(
                400,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {sorted(pending_ids)} (messages[{index}])",
            )
        if role == "system" and index > 0 and messages[index - 1]["role"] != "system":
            return ApiError(400, f"messages[{index}]: a system message must come before the conversation")
        if role == "assistant":
            pending_ids = {str(call.get("id")) for call in message.get("tool_calls") or []}
    if pending_ids:
        return ApiError(
            400,
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. Missing: {sorted(pending_ids)}",
        )
    last = messages[-1]
    if last["role"] == "assistant" and not last.get("prefix"):
        return ApiError(400, "The last message must be a user or tool message (or an assistant prefix on /beta)")
    return None


def check_reasoning_rule(body: dict[str, Any]) -> ApiError | None:
    """In thinking mode every assistant turn with tool calls must carry its reasoning_content."""
    if not thinking_enabled(body):
        return None
    for message in body["messages"]:
        if message["role"] == "assistant" and message.get("tool_calls"):
            if not isinstance(message.get("reasoning_content"), str):
                return ApiError(400, REASONING_RULE_MESSAGE)
    return None


def check_fim_body(body: Any) -> ApiError | None:
    if not isinstance(body, dict):
        return ApiError(422, "Invalid request body: expected a JSON object")
    if not isinstance(body.get("model"), str) or not isinstance(body.get("prompt"), str):
        return ApiError(422, "Failed to deserialize the JSON body: `model` and `prompt` are required")
    return None


def check_infill_body(body: Any) -> ApiError | None:
    """llama.cpp's `/infill`: `input_prefix` and `input_suffix` strings, `input_extra` a list of chunks."""
    if not isinstance(body, dict):
        return ApiError(400, "Invalid request body: expected a JSON object")
    if not isinstance(body.get("input_prefix", ""), str) or not isinstance(body.get("input_suffix", ""), str):
        return ApiError(400, "\"input_prefix\" and \"input_suffix\" must be strings")
    extra = body.get("input_extra", [])
    if not isinstance(extra, list) or not all(isinstance(c, dict) and isinstance(c.get("text", ""), str) for c in extra):
        return ApiError(400, "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}")
    return None
