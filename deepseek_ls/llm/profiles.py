"""Model profiles -> request parameters, endpoint and credentials.

Current DeepSeek models choose thinking with a request flag
(``thinking: {"type": "enabled"|"disabled"}`` plus ``reasoning_effort``); the
legacy names choose it by name (`deepseek-chat` no, `deepseek-reasoner` yes)
and get no flag. Temperature is only sent when thinking is off: thinking mode
ignores it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.config_models import LLMConfig, ModelProfile
from deepseek_ls.llm.errors import AuthError, BadRequestError

LEGACY_THINKING = {"deepseek-chat": False, "deepseek-reasoner": True}
BASE_URL_ENV = "DEEPSEEK_BASE_URL"


@dataclass(frozen=True)
class ResolvedProfile:
    """Everything one call needs from configuration and environment."""

    name: str
    model: str
    thinking: bool
    params: dict[str, Any] = field(default_factory=dict)  # body fields besides model/messages
    base_url: str = ""
    api_key: str = ""


def thinking_for(profile: ModelProfile, model: str) -> bool:
    return LEGACY_THINKING.get(model, profile.thinking)


def request_params(profile: ModelProfile, model: str) -> dict[str, Any]:
    thinking = thinking_for(profile, model)
    params: dict[str, Any] = {}
    if model not in LEGACY_THINKING:
        params["thinking"] = {"type": "enabled" if thinking else "disabled"}
        if thinking and profile.reasoning_effort:
            params["reasoning_effort"] = profile.reasoning_effort
    if profile.temperature is not None and not thinking:
        params["temperature"] = profile.temperature
    if profile.max_tokens is not None:
        params["max_tokens"] = profile.max_tokens
    return params


def resolve_profile(
    config: LLMConfig, name: str, *, model: str | None = None, env: Mapping[str, str] | None = None
) -> ResolvedProfile:
    """Pick profile `name` (model overridable) and find its base URL and API key.

    Base URL: the profile's, else ``$DEEPSEEK_BASE_URL``, else ``llm.base_url``.
    A missing API key is an `AuthError` before any request is made.
    """
    env = os.environ if env is None else env
    profile = config.profiles.get(name)
    if profile is None:
        raise BadRequestError(
            f"unknown model profile {name!r}; configured profiles: {', '.join(sorted(config.profiles))}"
        )
    chosen = model or profile.model
    key_env = profile.api_key_env or config.api_key_env
    api_key = env.get(key_env, "").strip()
    if not api_key:
        raise AuthError(f"{key_env} is not set: export {key_env}=<your DeepSeek API key> and retry")
    base_url = profile.base_url or env.get(BASE_URL_ENV) or config.base_url
    return ResolvedProfile(
        name=name,
        model=chosen,
        thinking=thinking_for(profile, chosen),
        params=request_params(profile, chosen),
        base_url=base_url.rstrip("/"),
        api_key=api_key,
    )
