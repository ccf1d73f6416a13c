"""`config show` without pydantic when every value set is a plain one (a cold start's fast path).

show_cache.py replays the output of a run whose inputs are all unchanged; after an edit
(exactly when people run `config show`) the config must be read and validated again.
Most edits set plain values: a number within bounds, a switch, one of a few words, a
list of strings. `show_spec.json` (derived from the pydantic models by show_spec.py,
checked by a test, and stamped with the hashes of the files it comes from) gives the
defaults, their sources and the type and bounds of every plain key. This module reads
the layers with the same functions as `load_config`, checks each value set against that
spec, and drops what an untrusted workspace file may not loosen with the same code as
`load_config` (`config_layers.without_loosening`, `trust.loosened_in_dumps`).

It answers only when it is sure: a plain `config show` (`--json`, `--workspace` allowed),
the user config, the workspace config and `DEEPSEEK_LS_*` variables setting plain keys
only (or fields of `[llm.profiles.NAME]` other than `base_url`), each value of the exact type (an int where a float goes is taken as that float)
and within its bounds. Anything else - an unknown or non-plain key, another type (even
one pydantic would convert), a value out of bounds, a file that does not parse,
`--config`, `--profile`, `DEEPSEEK_BASE_URL`, a spec that does not match the installed
files - returns None and the full pydantic path runs, with its errors. A test compares
both paths over a corpus of valid, invalid and hostile configs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
TYPE_CHECKING = False  # (typing is not imported at start-up)

if TYPE_CHECKING:
    from typing import Any

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_SPEC = os.path.join(_PACKAGE, "cli", "show_spec.json")
_MAX_EXACT_INT = 2**53  # ints that convert to a float exactly (larger ones: pydantic decides)


def _load_spec() -> dict | None:
    try:
        with open(_SPEC, encoding="utf-8") as fh:
            spec = json.load(fh)
        for rel, digest in spec["stamp"].items():
            with open(os.path.join(_PACKAGE, rel), "rb") as fh:
                if hashlib.sha256(fh.read()).hexdigest() != digest:
                    return None
        return spec
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _single(value: Any, leaf: dict) -> tuple[bool, Any]:
    kind = leaf["kind"].removeprefix("list[").removesuffix("]")
    if kind == "bool":
        ok = type(value) is bool
    elif kind == "int":
        ok = type(value) is int and abs(value) < 2**63
    elif kind == "float":
        if type(value) is int and abs(value) <= _MAX_EXACT_INT:
            value = float(value)
        ok = type(value) is float and math.isfinite(value)
    elif kind == "str":
        ok = type(value) is str and ("enum" not in leaf or value in leaf["enum"])
    else:
        ok = False
    return ok, value


def checked(value: Any, leaf: dict) -> tuple[bool, Any]:
    """(True, the value as validated) when `value` is certainly valid for `leaf`, else (False, None)."""
    if leaf["kind"].startswith("list["):
        if type(value) is not list:
            return False, None
        items = [_single(item, leaf) for item in value]
        return (all(ok for ok, _ in items), [v for _, v in items])
    ok, value = _single(value, leaf)
    if not ok:
        return False, None
    for name, bound in (("gt", leaf.get("gt")), ("ge", leaf.get("ge")), ("lt", leaf.get("lt")), ("le", leaf.get("le"))):
        if bound is None:
            continue
        if not {"gt": value > bound, "ge": value >= bound, "lt": value < bound, "le": value <= bound}[name]:
            return False, None
    return True, value


class _NotSure(Exception):
    """A value the fast path cannot vouch for: the full validation decides."""


def _leaves(values: dict, prefix: tuple = ()):
    """(dotted key, value) of every non-table value and empty table."""
    for name, value in values.items():
        if not name or "." in name:
            raise _NotSure  # `"router.threshold_high" = 1` is one (unknown) key, not a path
        if isinstance(value, dict) and value:
            yield from _leaves(value, (*prefix, name))
        else:
            yield ".".join((*prefix, name)), value


def _lookup(tree: dict, dotted: str):
    node = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _apply(config: dict, values: dict, spec: dict) -> tuple[dict, list[str]]:
    """`config` (a dump) with `values` (one layer's settings) validated and applied, and the dotted
    keys it sets; raises `_NotSure` for anything but plain values."""
    out = json.loads(json.dumps(config))
    keys = []
    for key, value in _leaves(values):
        parts = key.split(".")
        if value == {} and len(parts) == 3 and parts[:2] == ["llm", "profiles"]:
            # `[llm.profiles.NAME]` left empty (or emptied of what an untrusted file may not set).
            out["llm"]["profiles"].setdefault(parts[2], json.loads(json.dumps(spec["profile_default"])))
        if value == {} and isinstance(_lookup(out, key), dict):
            # An empty table where the config has one changes nothing (a table left empty
            # by an edit); it is named as the source of an empty one (a leaf of the dump).
            keys.append(key)
            continue
        leaf = spec["leaves"].get(key)
        if leaf is None and len(parts) == 4 and parts[:2] == ["llm", "profiles"]:
            # A profile's field: profiles merge key by key, a new one starts from the defaults.
            leaf = spec["profile_leaves"].get(parts[3])
            if leaf is not None:
                out["llm"]["profiles"].setdefault(parts[2], json.loads(json.dumps(spec["profile_default"])))
        if leaf is None:
            raise _NotSure
        ok, value = checked(value, leaf)
        if not ok:
            raise _NotSure
        *parents, last = key.split(".")
        node = out
        for part in parents:
            node = node[part]
        node[last] = value
        keys.append(key)
    return out, keys


def effective(layers: list, spec: dict, *, untrusted=None) -> tuple[dict, dict[str, str], list[str]] | None:
    """The dumped config, the sources and the ignored keys of `untrusted` (the workspace layer when the
    workspace is not trusted) after `layers`, as `load_config` gives them; None when any value is
    not certainly valid."""
    from deepseek_ls.config_layers import flatten, without_loosening

    config = spec["defaults"]
    sources = dict(spec["sources"])
    ignored: list[str] = []
    try:
        for layer in layers:
            values = layer.values
            if layer is untrusted:
                from deepseek_ls.trust import loosened_in_dumps

                current = config
                values, ignored = without_loosening(
                    values, lambda kept: loosened_in_dumps(current, _apply(current, kept, spec)[0]))
            config, keys = _apply(config, values, spec)
            sources.update({key: layer.label for key in keys})
    except _NotSure:
        return None
    return config, {key: sources.get(key, "default") for key in sorted(flatten(config))}, ignored


def render(*, root: str, profile: str | None, api_key_env: str, api_key_status: str,
           config: dict, sources: dict[str, str], as_json: bool) -> str:
    """`config show`'s output (both paths print through this)."""
    from deepseek_ls.config_layers import flatten

    if as_json:
        return json.dumps(
            {
                "workspace": root,
                "profile": profile,
                "api_key": {"env": api_key_env, "status": api_key_status},
                "config": config,
                "sources": sources,
            },
            indent=2, ensure_ascii=False, sort_keys=False,
        ) + "\n"
    values = flatten(config)
    lines = [f"# workspace: {root}", f"# api key ({api_key_env}): {api_key_status}"]
    rendered = {key: json.dumps(value, ensure_ascii=False) for key, value in values.items()}
    width = min(56, max(len(f"{k} = {v}") for k, v in rendered.items()))
    for key, text in rendered.items():
        line = f"{key} = {text}"
        lines.append(f"{line:<{width}}  # {sources.get(key, 'default')}")
    return "\n".join(lines) + "\n"


def output(argv: list[str], env=os.environ) -> tuple[str, str, str] | None:
    """What `config show` prints for `argv` (stdout), the API key variable it shows and its
    stderr (the warning about ignored workspace settings), or None when the full validation
    must decide."""
    from deepseek_ls.cli import show_cache

    options = show_cache._options(argv)
    if options is None or "--config" in options or "--profile" in options:
        return None
    if "DEEPSEEK_BASE_URL" in env:  # llm.base_url has a validator of its own
        return None
    workspace = options.get("--workspace")
    if workspace and not os.path.isdir(os.path.expanduser(workspace)):
        return None  # the full path reports it
    spec = _load_spec()
    if spec is None:
        return None
    from pathlib import Path

    from deepseek_ls.config_layers import (
        ConfigError, env_layers, mask_secret, toml_layer, trust_warning_text, user_config_path, workspace_config_path,
    )

    root = Path(show_cache._root(options))
    user_path = user_config_path(env)
    ws_path = workspace_config_path(root)
    untrusted = state = None
    try:
        layers = [toml_layer(p) for p in (user_path, ws_path) if p.is_file()]
        if ws_path.is_file():
            from deepseek_ls.trust import TrustStore, trust_file

            state = TrustStore(trust_file(user_path)).state(root, known={".deepseek/config.toml": layers[-1].sha256})
            untrusted = None if state.trusted else layers[-1]
        layers += env_layers(env)
    except ConfigError:
        return None
    result = effective(layers, spec, untrusted=untrusted)
    if result is None:
        return None
    config, sources, ignored = result
    api_key_env = config["llm"]["api_key_env"]
    text = render(root=str(root), profile=None, api_key_env=api_key_env,
                  api_key_status=mask_secret(env.get(api_key_env) or None),
                  config=config, sources=sources, as_json="--json" in options)
    warning = trust_warning_text(ws_path, ignored, state.reason if state else None)
    return text, api_key_env, f"{warning}\n" if warning else ""


def serve(argv: list[str], env=os.environ) -> bool:
    """Print `config show`'s output without pydantic if the fast path is sure of it (and cache it)."""
    from deepseek_ls.cli import show_cache
    from deepseek_ls.config_layers import user_config_path
    from deepseek_ls.trust import trust_file

    options = show_cache._options(argv)
    if options is None:
        return False
    user = user_config_path(env)
    try:
        root = show_cache._root(options)
    except OSError:
        return False
    # Inputs taken before reading, as the full path does: a file changed meanwhile mismatches next time.
    snap = show_cache.snapshot(argv, root=root, user_config=user, trust_file=trust_file(user), env=env)
    result = output(argv, env)
    if result is None:
        return False
    out, api_key_env, err = result
    if err:
        sys.stderr.write(err)
    sys.stdout.write(out)
    sys.stdout.flush()
    show_cache.store(snap, api_key_env=api_key_env, stdout=out, stderr=err, env=env)
    return True
