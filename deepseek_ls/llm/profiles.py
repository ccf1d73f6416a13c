"""Model profiles -> registry entry, request parameters, endpoint and credentials.

A profile names a registry entry (`llm/models.py`); the entry says what the
model takes. Current DeepSeek models choose thinking with a request flag
(``thinking: {"type": "enabled"|"disabled"}`` plus ``reasoning_effort``); the
legacy names choose it by name (`deepseek-chat` no, `deepseek-reasoner` yes)
and get no flag; Ollama-style servers take ``reasoning_effort`` alone; servers
without a switch get neither. Temperature is only sent when thinking is off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.config_models import LLMConfig, ModelEntry
from deepseek_ls.llm.errors import AuthError, BadRequestError
from deepseek_ls.llm.models import LEGACY_THINKING, lookup, request_params, thinking_for
from deepseek_ls.policy.redact import register_secret

__all__ = ["BASE_URL_ENV", "LEGACY_THINKING", "ResolvedProfile", "request_params", "resolve_profile"]

BASE_URL_ENV = "DEEPSEEK_BASE_URL"


@dataclass(frozen=True)
class ResolvedProfile:
    """Everything one call needs from configuration and environment."""

    name: str
    model: str  # the id sent to the server
    thinking: bool
    params: dict[str, Any] = field(default_factory=dict)  # body fields besides model/messages
    base_url: str = ""
    api_key: str = ""
    entry: ModelEntry | None = None
    entry_name: str = ""
    key_env: str = ""
    note: str = ""  # why the entry differs from what the profile names, if it does


def _endpoint(config: LLMConfig, profile_base: str | None, entry: ModelEntry, env: Mapping[str, str]) -> str:
    base_url = profile_base or entry.base_url or env.get(BASE_URL_ENV) or config.base_url
    return base_url.rstrip("/")


def resolve_profile(
    config: LLMConfig, name: str, *, model: str | None = None, env: Mapping[str, str] | None = None
) -> ResolvedProfile:
    """Pick profile `name` (model overridable) and find its entry, base URL and API key.

    Base URL: the profile's, else the entry's, else ``$DEEPSEEK_BASE_URL``, else
    ``llm.base_url``. A missing API key is an `AuthError` before any request,
    unless the entry says the server takes none.

    A DeepSeek model is never sent to a server the fast profile knows to be
    something else: when `name` names a DeepSeek entry on the same endpoint as a
    non-DeepSeek fast model (say max-think after `--profile local`), the call
    uses the fast model instead, with thinking if it has a switch.
    """
    env = os.environ if env is None else env
    profile = config.profiles.get(name)
    if profile is None:
        raise BadRequestError(
            f"unknown model profile {name!r}; configured profiles: {', '.join(sorted(config.profiles))}"
        )
    models = config.models
    entry_name, entry = lookup(models, model or profile.model, custom_endpoint=bool(profile.base_url))
    base_url = _endpoint(config, profile.base_url, entry, env)
    note = ""
    if name != "fast" and entry.provider == "deepseek" and "fast" in config.profiles:
        fast = config.profiles["fast"]
        fast_name, fast_entry = lookup(models, fast.model, custom_endpoint=bool(fast.base_url))
        if fast_entry.provider != "deepseek" and _endpoint(config, fast.base_url, fast_entry, env) == base_url:
            note = (f"{entry.id} is not served by {base_url} ({fast_entry.provider}); "
                    f"profile {name!r} uses {fast_entry.id} there")
            entry_name, entry = fast_name, fast_entry
    key_env = profile.api_key_env or entry.api_key_env or config.api_key_env
    api_key = env.get(key_env, "").strip()
    register_secret(api_key)  # never passed to a command, redacted wherever it shows up
    if not api_key and entry.api_key_required:
        where = "DeepSeek API key" if entry.provider == "deepseek" else f"API key for {base_url}"
        raise AuthError(f"{key_env} is not set: export {key_env}=<your {where}> and retry")
    return ResolvedProfile(
        name=name,
        model=entry.id,
        thinking=thinking_for(profile, entry),
        params=request_params(profile, entry),
        base_url=base_url,
        api_key=api_key,
        entry=entry,
        entry_name=entry_name,
        key_env=key_env,
        note=note,
    )
