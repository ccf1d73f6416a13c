"""Command and request arguments: `params.parse_args(params.HunkArgs, raw)`.

The pydantic models live in `param_models.py` and load on first use, so the
server answers `initialize` before pydantic is imported (start-up time); the
error they raise, `ArgsError`, lives in `arguments.py` with the rule that a
command takes one JSON object.
"""

from __future__ import annotations

from typing import Any


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
