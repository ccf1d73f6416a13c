"""`deepseek-ls models [NAME]`: the model registry with capabilities, prices and where each value came from."""

from __future__ import annotations

import argparse
import os
from typing import Any

from deepseek_ls.cli.common import add_command, print_json, resolve_context

# Which keys are shown on which line, in order.
_GROUPS = {
    "endpoint": ("id", "provider", "base_url", "api_key_env", "api_key_required"),
    "limits": ("context_window", "max_output_tokens", "default_max_tokens", "max_inflight",
               "first_token_timeout_seconds", "total_timeout_seconds"),
    "capabilities": ("thinking_switch", "reasoning_field", "tools", "json_mode", "fim", "fim_api", "stream_usage",
                     "edit_format", "tokenizer"),
    "prices per 1M tokens": ("price_cache_hit", "price_cache_miss", "price_output", "currency"),
    "peak billing": ("peak_price_factor", "peak_hours_utc", "peak_days"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "models",
        help="list the model registry: capabilities, prices, which profile uses each, where each value came from",
        description=(
            "The model registry: the shipped presets (deepseek_ls/llm/presets.toml) and your [models.NAME]\n"
            "tables. Each value is followed by the layer it came from. See docs/llm.md."
        ),
        handler=_models,
    )
    parser.add_argument("name", nargs="?", help="show only this entry")


def describe(loaded: Any, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every registry entry as data: values, their sources, the profiles using it, its resolved endpoint."""
    from deepseek_ls.llm.models import lookup
    from deepseek_ls.llm.profiles import BASE_URL_ENV
    from deepseek_ls.llm.tokens import exact_counter

    env = dict(os.environ if env is None else env)
    config = loaded.config
    used_by: dict[str, list[str]] = {}
    for profile_name, profile in config.llm.profiles.items():
        entry_name, _ = lookup(config.models, profile.model, custom_endpoint=bool(profile.base_url))
        used_by.setdefault(entry_name, []).append(profile_name)
    out = []
    for name, entry in config.models.items():
        values = entry.model_dump(mode="json")
        sources = {key: loaded.sources.get(f"models.{name}.{key}", "default") for key in values}
        endpoint = entry.base_url or env.get(BASE_URL_ENV) or config.llm.base_url
        key_env = entry.api_key_env or config.llm.api_key_env
        out.append({
            "name": name,
            "values": values,
            "sources": sources,
            "profiles": sorted(used_by.get(name, [])),
            "endpoint": endpoint.rstrip("/"),
            "api_key": {"env": key_env, "set": bool(env.get(key_env, "").strip())},
            "token_counts": "exact" if entry.tokenizer and exact_counter(entry.tokenizer) else "estimated",
        })
    return out


def _models(args: argparse.Namespace) -> int:
    ctx = resolve_context(args, create_state=False)
    entries = describe(ctx.loaded_config)
    if args.name:
        entries = [e for e in entries if e["name"] == args.name]
        if not entries:
            known = ", ".join(sorted(ctx.loaded_config.config.models))
            print(f"deepseek-ls: error: no model named {args.name!r}; known: {known}", file=__import__("sys").stderr)
            return 2
    if args.json:
        print_json({"models": entries})
        return 0
    for entry in entries:
        used = f"  (profiles: {', '.join(entry['profiles'])})" if entry["profiles"] else ""
        key = entry["api_key"]
        print(f"{entry['name']}{used}")
        print(f"  endpoint  {entry['endpoint']}  key {key['env']}: {'set' if key['set'] else 'not set'}"
              f"  token counts: {entry['token_counts']}")
        for group, keys in _GROUPS.items():
            print(f"  {group}:")
            for k in keys:
                value = entry["values"].get(k)
                line = f"{k} = {_show(value)}"
                print(f"    {line:<46} # {entry['sources'].get(k, 'default')}")
        print()
    return 0


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return str(value)
