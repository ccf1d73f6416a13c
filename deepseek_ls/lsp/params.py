"""Command and request arguments: `params.parse_args(params.HunkArgs, raw)`.

The pydantic models live in `param_models.py` and load on first use, so the
server answers `initialize` before pydantic is imported (start-up time).
"""

from __future__ import annotations

from typing import Any


class ArgsError(ValueError):
    """Arguments that do not match the command's shape (-32602 to the client)."""


def the_argument(arguments: tuple[Any, ...]) -> Any:
    """A command's one JSON object argument, as pygls delivers `arguments` (None when
    none was sent: `arguments` omitted or `[]`). Raises `ArgsError` for anything else,
    so no command runs on `[1]`, `["yes"]` or two objects."""
    if len(arguments) > 1:
        raise ArgsError(f"expected one JSON object argument, got {len(arguments)} arguments")
    value = arguments[0] if arguments else None
    if value is None or isinstance(value, dict) or hasattr(value, "_asdict"):
        return value
    kind = "a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float)) else (
        "a string" if isinstance(value, str) else "an array" if isinstance(value, (list, tuple)) else type(value).__name__)
    raise ArgsError(f"expected one JSON object argument, got {kind}")


def parse_args(model: Any, raw: Any) -> Any:
    """Validate `raw` as `model`; raises `ArgsError` naming the bad field."""
    from deepseek_ls.lsp.param_models import parse_args as parse

    return parse(model, raw)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # the import system's probes (`from params import x` asks for __path__)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from deepseek_ls.lsp import param_models

    try:
        return getattr(param_models, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
