"""A command's one JSON object argument (docs/protocol.md): `the_argument` takes it out of
what pygls delivers, and `ArgsError` (-32602 to the client, `guard.py`) says what is wrong
with it or with its fields (`param_models.parse_args`). Free of pydantic: commands run
through here before the models load."""

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
