"""The model registry: which entry a profile names, and what a request to it may carry.

Entries are data (`[models.NAME]` in config, starting from the shipped presets
in `presets.toml`); this module only reads them. `lookup` turns a profile's
`model` into an entry (a name the registry does not know becomes an ad-hoc
entry: DeepSeek's settings on DeepSeek's endpoint, the conservative generic
ones on any other); `request_params` turns profile + entry into body fields,
never sending a parameter the entry's capabilities say the model does not take.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deepseek_ls.config_models import ModelEntry, ModelProfile

# Legacy DeepSeek names choose thinking by name and take no `thinking` flag.
LEGACY_THINKING = {"deepseek-chat": False, "deepseek-reasoner": True}
DEEPSEEK_PRESET = "deepseek-v4-flash"
GENERIC_PRESET = "openai-compatible"

# Parameters a request can do without: a server that rejects one by name gets the request again without it.
DROPPABLE_PARAMS = ("thinking", "reasoning_effort", "stream_options", "tool_choice", "parallel_tool_calls",
                    "response_format", "temperature")

# `reasoning_effort` values as the OpenAI-style switch (Ollama, OpenAI) spells them.
_EFFORT_OPENAI = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "high",
                  "max": "high", "ultra": "high"}


def lookup(models: Mapping[str, ModelEntry], name: str, *, custom_endpoint: bool = False) -> tuple[str, ModelEntry]:
    """`(entry name, entry)` for a profile's `model`.

    A registry name wins; then an entry whose `id` is `name`; else an ad-hoc
    entry with that id, from DeepSeek's preset (or the generic one when the
    profile has its own `base_url`, i.e. the model is served elsewhere).
    """
    if name in models:
        return name, models[name]
    for entry_name, entry in models.items():
        if entry.id == name:
            return entry_name, entry
    base = GENERIC_PRESET if custom_endpoint else DEEPSEEK_PRESET
    template = models.get(base) or ModelEntry(id=name)
    return name, template.model_copy(update={"id": name, "preset": base})


def thinking_for(profile: ModelProfile, entry: ModelEntry) -> bool:
    """Whether this call runs in thinking mode (the history rule depends on it)."""
    if entry.id in LEGACY_THINKING:
        return LEGACY_THINKING[entry.id]
    if entry.thinking_switch == "none":
        return False
    return profile.thinking


def output_cap(profile: ModelProfile, entry: ModelEntry) -> int:
    """`max_tokens` of a call: the profile's, else the entry's default cap; never above the model's maximum."""
    return min(profile.max_tokens or entry.output_cap, entry.max_output_tokens)


def request_params(profile: ModelProfile, entry: ModelEntry) -> dict[str, Any]:
    """Body fields besides model/messages/stream/tools, as the entry's capabilities allow."""
    thinking = thinking_for(profile, entry)
    params: dict[str, Any] = {}
    if entry.id not in LEGACY_THINKING:
        if entry.thinking_switch == "thinking":
            params["thinking"] = {"type": "enabled" if thinking else "disabled"}
            if thinking and profile.reasoning_effort:
                params["reasoning_effort"] = profile.reasoning_effort
        elif entry.thinking_switch == "reasoning_effort":
            params["reasoning_effort"] = _EFFORT_OPENAI.get(profile.reasoning_effort or "high", "high") \
                if thinking else "none"
    if profile.temperature is not None and not thinking:
        params["temperature"] = profile.temperature
    params["max_tokens"] = output_cap(profile, entry)
    return params


def sends_reasoning_back(entry: ModelEntry, thinking: bool) -> bool:
    """DeepSeek's thinking mode wants the reasoning of tool-call turns back; nobody else does."""
    return thinking and entry.reasoning_field == "reasoning_content" and (
        entry.thinking_switch == "thinking" or entry.id in LEGACY_THINKING
    )
