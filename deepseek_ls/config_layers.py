"""Reading the configuration's layers: files, environment, merging. Stdlib only.

`config.py` validates the merged layers with the pydantic models; this part has no
pydantic, no typing and no dataclasses so that `config show`'s fast path
(cli/show_fast.py) can read the very same layers in a few milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from deepseek_ls.workspace import STATE_DIR_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENV_PREFIX = "DEEPSEEK_LS_"
ENV_USER_CONFIG = "DEEPSEEK_LS_USER_CONFIG"


class ConfigError(Exception):
    """A configuration layer is unreadable or holds a bad value / unknown key."""

    exit_code = 2

    def __init__(self, file: str, key: str, reason: str) -> None:
        self.file = file
        self.key = key
        self.reason = reason
        where = f"{file}: {key}" if key else file
        super().__init__(f"config error in {where}: {reason}")

    @property
    def user_message(self) -> str:
        return str(self)


class Layer:
    """One source of settings: a label for `sources` and its (nested) values."""

    __slots__ = ("label", "values", "sha256")

    def __init__(self, label: str, values: dict[str, Any], sha256: str | None = None) -> None:
        self.label = label
        self.values = values
        # sha256 of the bytes a file layer was parsed from: the trust check compares these very
        # bytes, so a file swapped between the check and the read (a symlink retargeted) cannot pass.
        self.sha256 = sha256

    def __repr__(self) -> str:
        return f"Layer({self.label!r}, {self.values!r}, {self.sha256!r})"


# A config file larger than this is refused (a symlink to a huge file must not fill memory).
MAX_CONFIG_BYTES = 1024 * 1024


def mask_secret(value: str | None) -> str:
    """Say whether a secret is set, showing at most its last 4 characters."""
    if not value:
        return "not set"
    if len(value) < 12:
        return "set"
    return f"set (...{value[-4:]})"


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(ENV_USER_CONFIG):
        return Path(env[ENV_USER_CONFIG]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("deepseek-ls")) / "config.toml"


def workspace_config_path(workspace: Path) -> Path:
    return workspace / STATE_DIR_NAME / "config.toml"


def json_copy(values: dict[str, Any]) -> dict[str, Any]:
    return {k: json_copy(v) if isinstance(v, dict) else (list(v) if isinstance(v, list) else v) for k, v in values.items()}


def toml_layer(path: Path) -> Layer:
    import hashlib
    import tomllib

    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(str(path), "", f"larger than {MAX_CONFIG_BYTES} bytes")
        values = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(str(path), "", f"not valid TOML: {error}") from error
    except OSError as error:
        raise ConfigError(str(path), "", f"cannot read: {error.strerror or error}") from error
    return Layer(str(path), values, hashlib.sha256(data).hexdigest())


def env_layers(env: Mapping[str, str]) -> list[Layer]:
    layers = []
    if env.get("DEEPSEEK_BASE_URL"):
        layers.append(Layer("env DEEPSEEK_BASE_URL", {"llm": {"base_url": env["DEEPSEEK_BASE_URL"]}}))
    for name in sorted(env):
        # Only SECTION__KEY names are config keys; other DEEPSEEK_LS_* variables
        # (e.g. DEEPSEEK_LS_USER_CONFIG) have their own meaning.
        if not name.startswith(ENV_PREFIX) or "__" not in name[len(ENV_PREFIX) :]:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if not all(parts):
            raise ConfigError(f"env {name}", "", "empty key segment (use SECTION__KEY)")
        layers.append(Layer(f"env {name}", expand_dotted({".".join(parts): env_value(env[name])})))
    return layers


def env_value(raw: str) -> Any:
    """`0.8` -> 0.8, `true` -> True, `["a", "b"]` -> list; anything else stays a string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def expand_dotted(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            value = expand_dotted(value)
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        if isinstance(value, dict) and isinstance(node.get(last), dict):
            node[last] = deep_merge(node[last], value)
        else:
            node[last] = value
    return out


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` layered onto `base`: tables merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def flatten(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings -> ``{"router.threshold_high": 0.72, ...}`` (lists and empty tables are leaves)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def without_loosening(values: dict[str, Any], loosened) -> tuple[dict[str, Any], list[str]]:
    """`values` (an untrusted workspace file's settings) less those that would loosen policy, and
    the dotted keys dropped. `loosened(values)` names the keys `values` would loosen (it validates;
    it may raise)."""
    kept = values
    dropped: list[str] = []
    for _ in range(3):
        loose = loosened(kept)
        if not loose:
            return kept, dropped
        kept = _drop_keys(kept, loose)
        dropped += [k for k in loose if k not in dropped]
    # Could not narrow it down: none of the file's settings apply.
    return {}, sorted(flatten(values))


def _drop_keys(values: dict[str, Any], dotted: list[str]) -> dict[str, Any]:
    """A copy of `values` without the given dotted keys; a key not set as such (a value from a
    preset or a legacy alias) drops the deepest table of the file on its path."""
    out = json_copy(values)
    for key in dotted:
        parts = key.split(".")
        path: list[tuple[dict[str, Any], str]] = []  # (table, key in it) down the dotted key
        node: Any = out
        for part in parts:
            if not isinstance(node, dict) or part not in node:
                break
            path.append((node, part))
            node = node[part]
        if path:
            table, name = path[-1]
            del table[name]
    return out


def trust_warning_text(workspace_path, ignored: list[str], workspace_trust: str | None) -> str | None:
    """One line for the person when settings of an untrusted workspace file were ignored, else None."""
    if not ignored:
        return None
    why = "changed since you trusted it" if workspace_trust == "changed" else "is not trusted"
    return (
        f"deepseek-ls: ignoring settings that loosen policy in {workspace_path} "
        f"({', '.join(ignored)}): this workspace {why}; "
        "run `deepseek-ls trust` (or the 'DeepSeek: Trust Workspace' command) if you wrote them"
    )
