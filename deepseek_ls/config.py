"""Load the effective configuration from its layers and remember where each value came from.

Layers, later wins:

1. defaults (``config_models.py``)
2. user config: ``<platform config dir>/deepseek-ls/config.toml``
   (``$DEEPSEEK_LS_USER_CONFIG`` points elsewhere, e.g. in tests)
3. workspace config: ``<root>/.deepseek/config.toml`` — it comes with the repository, so
   settings in it that loosen policy are ignored (and reported in `LoadedConfig.trust_warning`)
   until the person trusts the workspace (`trust.py`)
4. environment: ``DEEPSEEK_BASE_URL`` (→ ``llm.base_url``) and
   ``DEEPSEEK_LS_<SECTION>__<KEY>[__<KEY>...]`` (e.g. ``DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH=0.8``);
   values are read as TOML values when they parse (numbers, booleans, lists), else as strings
5. ``--config PATH``
6. command-line overrides (dotted keys), then ``--profile NAME``

``--profile NAME`` makes the named model profile the ``fast`` one for this run:
every call that would use the default profile uses NAME instead, while the
router can still escalate to ``max_think``.

A bad value or an unknown key raises `ConfigError` naming the file (or variable),
the dotted key and the reason. The API key itself is never part of `Config`: it is
read from the environment variable named by ``llm.api_key_env``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from deepseek_ls.config_layers import (  # noqa: F401 - re-exported: callers import them from here
    ENV_PREFIX,
    ENV_USER_CONFIG,
    MAX_CONFIG_BYTES,
    ConfigError,
    Layer,
    deep_merge,
    flatten,
    json_copy,
    mask_secret,
    trust_warning_text,
    user_config_path,
    without_loosening,
    workspace_config_path,
)
from deepseek_ls.config_layers import env_layers as _env_layers
from deepseek_ls.config_layers import expand_dotted as _expand_dotted
from deepseek_ls.config_layers import toml_layer as _toml_layer

if TYPE_CHECKING:
    from deepseek_ls.config_models import Config

# pydantic and the config models are imported by the functions that validate; reading the
# layers (config_layers.py) stays cheap for `config show`'s fast path (cli/show_fast.py).
DEFAULT_SOURCE = "default"
PRESET_SOURCE = "preset"


@dataclass
class LoadedConfig:
    config: Config
    # dotted key (e.g. "router.threshold_high") -> where its effective value came from
    sources: dict[str, str]
    profile: str | None = None
    user_path: Path | None = None
    workspace_path: Path | None = None
    api_key: str | None = field(default=None, repr=False)
    # "trusted" | "never" (not trusted) | "changed" (a config file changed since it was trusted);
    # None when the workspace has no config file of its own.
    workspace_trust: str | None = None
    # Dotted keys the workspace file set that were ignored because they loosen policy.
    ignored_untrusted: list[str] = field(default_factory=list)

    def api_key_display(self) -> str:
        return mask_secret(self.api_key)

    def trust_warning(self) -> str | None:
        """One line for the person when workspace settings were ignored, else None."""
        return trust_warning_text(self.workspace_path, self.ignored_untrusted, self.workspace_trust)


def load_config(
    workspace: Path,
    *,
    config_path: Path | None = None,
    profile: str | None = None,
    cli_overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] = os.environ,
) -> LoadedConfig:
    """Merge every layer into a validated `Config`; raise `ConfigError` on the first bad one."""
    from deepseek_ls.config_models import Config, preset_tables

    user_path = user_config_path(env)
    ws_path = workspace_config_path(workspace)
    layers: list[Layer] = []
    ws_layer: Layer | None = None
    for path in (user_path, ws_path):
        if path.is_file():
            layers.append(_toml_layer(path))
    if ws_path.is_file():
        ws_layer = layers[-1]
    layers.extend(_env_layers(env))
    if config_path is not None:
        if not config_path.is_file():
            raise ConfigError(str(config_path), "", "file not found (given with --config)")
        layers.append(_toml_layer(config_path))
    if cli_overrides:
        layers.append(Layer("command line", _expand_dotted(cli_overrides)))

    defaults = Config()
    # Profiles are a dict, not a model: seed it with the default profiles so that a
    # partial `[llm.profiles.max_think]` table changes only the keys it names.
    # Likewise the model registry starts from the shipped presets: `[models.deepseek-v4-flash]`
    # with one key changes that key only.
    merged: dict[str, Any] = {
        "llm": {"profiles": defaults.model_dump()["llm"]["profiles"]},
        "models": {name: dict(table) for name, table in preset_tables().items()},
    }
    sources = {key: DEFAULT_SOURCE for key in _leaf_keys(defaults.model_dump())}
    sources.update({key: PRESET_SOURCE for key in _leaf_keys({"models": preset_tables()})})
    config = defaults
    trust_state: str | None = None
    ignored: list[str] = []
    for layer in layers:
        if layer is ws_layer:
            from deepseek_ls.trust import TrustStore, trust_file

            state = TrustStore(trust_file(user_path)).state(
                workspace, known={".deepseek/config.toml": layer.sha256})
            trust_state = state.reason
            if not state.trusted:
                layer, ignored = _without_loosening(merged, config, layer, sources)
        merged = deep_merge(merged, layer.values)
        layer_keys = _leaf_keys(layer.values)
        sources.update({key: layer.label for key in layer_keys})
        config = _validate(merged, layer, sources)
    _credit_legacy_aliases(config, sources)
    if profile:
        config = _select_profile(config, profile, sources)
    # One entry per effective leaf (e.g. a new profile's unset fields are defaults).
    effective = {key: sources.get(key, DEFAULT_SOURCE) for key in _leaf_keys(config.model_dump())}
    for name, entry in config.models.items():  # keys a `preset = "X"` entry inherited
        if entry.preset:
            for key in preset_tables().get(entry.preset, {}):
                dotted = f"models.{name}.{key}"
                if effective.get(dotted) == DEFAULT_SOURCE:
                    effective[dotted] = f"{PRESET_SOURCE} {entry.preset}"
    return LoadedConfig(
        config=config,
        sources=dict(sorted(effective.items())),
        profile=profile,
        user_path=user_path,
        workspace_path=ws_path,
        api_key=env.get(config.llm.api_key_env) or None,
        workspace_trust=trust_state,
        ignored_untrusted=ignored,
    )


def _without_loosening(
    merged: dict[str, Any], current: Config, layer: Layer, sources: dict[str, str]
) -> tuple[Layer, list[str]]:
    """`layer` (an untrusted workspace file) less the settings that would loosen policy,
    and the dotted keys that were dropped."""
    from deepseek_ls.trust import loosened_keys

    def loosened(values: dict[str, Any]) -> list[str]:
        named = {**sources, **{key: layer.label for key in _leaf_keys(values)}}  # errors name this file
        return loosened_keys(current, _validate(deep_merge(merged, values), layer, named))

    values, dropped = without_loosening(layer.values, loosened)
    return Layer(layer.label, values), dropped


def strip_loosening(base: Config, values: dict[str, Any], label: str) -> tuple[dict[str, Any], list[str]]:
    """`values` (nested settings layered on `base`) less the ones that would loosen policy, and the
    dotted keys dropped. For sources that cannot be trusted yet, e.g. the editor's settings
    (which a repository's `.vscode/settings.json` can set) in an untrusted workspace."""
    layer, dropped = _without_loosening(base.model_dump(), base, Layer(label, values), {})
    return layer.values, dropped


def _leaf_keys(values: Mapping[str, Any]) -> list[str]:
    return list(flatten(values))


def _validate(merged: dict[str, Any], layer: Layer, sources: dict[str, str]) -> Config:
    from pydantic import ValidationError

    from deepseek_ls.config_models import Config

    try:
        return Config.model_validate(merged)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        reason = _reason(first, merged)
        raise ConfigError(sources.get(key, layer.label), key, reason) from None


def _reason(detail: Mapping[str, Any], merged: Mapping[str, Any]) -> str:
    if detail["type"] != "extra_forbidden":
        return f"{detail['msg']} (got {detail.get('input')!r})"
    *parents, name = [str(p) for p in detail["loc"]]
    known = _known_fields(parents)
    import difflib

    hint = difflib.get_close_matches(name, known, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    return f"unknown key{suggestion} (known here: {', '.join(sorted(known))})"


def _known_fields(parents: list[str]) -> list[str]:
    """Field names of the model at `parents` (e.g. ["router", "weights"], ["llm", "profiles", "fast"])."""
    from typing import get_args, get_origin

    from pydantic import BaseModel

    from deepseek_ls.config_models import Config

    node: Any = Config
    for part in parents:
        if isinstance(node, type) and issubclass(node, BaseModel) and part in node.model_fields:
            node = node.model_fields[part].annotation
        elif get_origin(node) is dict:
            node = get_args(node)[1]  # `part` is a key of the dict, e.g. a profile name
        else:
            return []
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return []


def _credit_legacy_aliases(config: Config, sources: dict[str, str]) -> None:
    """`llm.base_model` etc. set profile fields; show the layer that set them."""
    aliases = {
        "llm.base_model": "llm.profiles.fast.model",
        "llm.max_think_model": "llm.profiles.max_think.model",
        "llm.temperature": "llm.profiles.fast.temperature",
    }
    for alias, target in aliases.items():
        if sources.get(alias, DEFAULT_SOURCE) != DEFAULT_SOURCE:
            sources[target] = f"{sources[alias]} ({alias})"


def _select_profile(config: Config, name: str, sources: dict[str, str]) -> Config:
    profiles = config.llm.profiles
    if name not in profiles:
        raise ConfigError(
            "--profile", "llm.profiles", f"no profile named {name!r}; known: {', '.join(sorted(profiles))}"
        )
    chosen = dict(profiles)
    chosen["fast"] = profiles[name]
    llm = config.llm.model_copy(update={"profiles": chosen})
    for key in list(sources):
        if key.startswith("llm.profiles.fast."):
            sources[key] = f"--profile {name}"
    return config.model_copy(update={"llm": llm})
