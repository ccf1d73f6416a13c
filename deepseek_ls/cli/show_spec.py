"""What `config show`'s fast path (show_fast.py) knows about the config model, derived from it.

`config show` with inputs it has not seen before would import pydantic and build every
model just to print a table: most of its start-up. Most edits people make are plain
values (`router.threshold_high = 0.8`, `policy.command_timeout_seconds = 30`), whose
validation is a type and a bound. This module derives, from the pydantic models
themselves, the facts needed to validate and print exactly those without pydantic:

- `defaults`: `Config().model_dump(mode="json")`, and `sources`: where each default
  value comes from (`load_config` with no layers);
- `leaves`: every *plain* dotted key, with its type and bounds. A field is plain when it
  is reached from `Config` through model fields only (not inside a dict such as
  `llm.profiles` or `models`), its model's configuration holds no coercion switches, it
  has no validator of its own, no alias, and its type is bool, int, float, str, a Literal
  of strings (optionally `| None`), or a list of those. Model validators make a model's
  fields not plain, except for the fields listed in `_MODEL_VALIDATOR_FIELDS`: the only
  ones those validators read or write;
- `profile_leaves` and `profile_default`: the same for the fields of one model profile
  (`[llm.profiles.NAME]`) and a new profile's values;
- `stamp`: sha256 of the files these facts come from; the fast path steps aside when the
  installed files differ.

Anything else (another key, a value of another type or out of bounds, a table where a
value goes) is left to pydantic: the fast path then runs the full validation, so errors
and unusual values are reported exactly as before. The generated facts are stored in
`show_spec.json`; a test regenerates them and compares (`python -m
deepseek_ls.cli.show_spec` rewrites the file).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

SPEC_PATH = Path(__file__).with_name("show_spec.json")
_PACKAGE = Path(__file__).resolve().parent.parent
# The files the spec is derived from (relative to the package): changing one changes the stamp.
STAMPED_FILES = ("config_models.py", "config.py", "config_layers.py", "llm/presets.toml", "cli/show_spec.py")
# Model validators and the fields they read or write: those fields are not plain; the model's
# other fields stay plain. A model with a validator not listed here has no plain fields.
_MODEL_VALIDATOR_FIELDS = {
    "Config": {"_attach_registry": {"models", "llm"}},
    "LLMConfig": {"_apply_legacy_names": {"profiles", "base_model", "max_think_model", "temperature"}},
}
# `llm` is named for Config's validator because it sets `llm._models`, a private attribute that
# is never dumped; the LLMConfig section itself is walked, with its own validator's fields excluded.
_WALK_THROUGH = {("Config", "llm")}
_HARMLESS_MODEL_CONFIG = {"extra", "validate_assignment", "defer_build"}


def stamp(package: Path = _PACKAGE) -> dict[str, str]:
    return {rel: hashlib.sha256((package / rel).read_bytes()).hexdigest() for rel in STAMPED_FILES}


def _leaf_type(annotation: Any) -> dict[str, Any] | None:
    """The fast path's description of a field type, or None when it is not a plain one."""
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None
        return _leaf_type(members[0])
    if origin is list:
        (item,) = get_args(annotation)
        inner = _leaf_type(item)
        if inner is None or inner["kind"] != "str":
            return None
        return {**inner, "kind": "list[str]"}
    if origin is Literal:
        values = list(get_args(annotation))
        if not all(type(v) is str for v in values):
            return None
        return {"kind": "str", "enum": values}
    if annotation in (bool, int, float, str):
        return {"kind": annotation.__name__}
    return None


def _bounds(metadata: list[Any]) -> dict[str, Any] | None:
    import annotated_types

    out: dict[str, Any] = {}
    for item in metadata:
        for cls, name in ((annotated_types.Gt, "gt"), (annotated_types.Ge, "ge"),
                          (annotated_types.Lt, "lt"), (annotated_types.Le, "le")):
            if type(item) is cls:
                out[name] = getattr(item, name)
                break
        else:
            return None  # any other constraint: not plain
    return out


def _walk(model: type, prefix: str, leaves: dict[str, dict[str, Any]]) -> None:
    from pydantic import BaseModel

    if set(model.model_config) - _HARMLESS_MODEL_CONFIG:
        return
    decorators = model.__pydantic_decorators__
    allowed = _MODEL_VALIDATOR_FIELDS.get(model.__name__, {})
    excluded: set[str] = set()
    for name in decorators.model_validators:
        if name not in allowed:
            return
        excluded |= allowed[name]
    if decorators.root_validators or decorators.field_serializers or decorators.model_serializers:
        return
    for decorator in decorators.field_validators.values():
        excluded |= set(decorator.info.fields)
    for name, field in model.model_fields.items():
        dotted = f"{prefix}{name}"
        walk_through = (model.__name__, name) in _WALK_THROUGH
        if (name in excluded and not walk_through) or field.alias or field.validation_alias:
            continue
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _walk(annotation, dotted + ".", leaves)
            continue
        kind = _leaf_type(annotation)
        bounds = _bounds(field.metadata)
        if kind is not None and bounds is not None:
            leaves[dotted] = {**kind, **bounds}


def generate() -> dict[str, Any]:
    """The spec, derived from the installed config model (imports pydantic)."""
    from deepseek_ls.config import ENV_USER_CONFIG, load_config
    from deepseek_ls.config_models import Config, ModelProfile

    leaves: dict[str, dict[str, Any]] = {}
    _walk(Config, "", leaves)
    profile_leaves: dict[str, dict[str, Any]] = {}
    _walk(ModelProfile, "", profile_leaves)
    with tempfile.TemporaryDirectory() as empty:
        loaded = load_config(Path(empty), env={ENV_USER_CONFIG: os.path.join(empty, "none.toml")})
    return {
        "stamp": stamp(),
        "defaults": Config().model_dump(mode="json"),
        "sources": loaded.sources,
        "leaves": dict(sorted(leaves.items())),
        # `[llm.profiles.NAME]`: a dict of profiles, merged key by key onto the default profiles
        # (load_config seeds them); a new NAME starts from `ModelProfile()`.
        "profile_leaves": dict(sorted(profile_leaves.items())),
        "profile_default": ModelProfile().model_dump(mode="json"),
    }


def render(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SPEC_PATH.write_text(render(generate()), encoding="utf-8")
    print(f"wrote {SPEC_PATH}", file=sys.stderr)
