"""The JSON object (or list) in a model's answer: in a ```json fence, bare, or wrapped in prose.

Shared by the parsers of the contracts that answer in JSON (`plan_parse.py`, `review_parse.py`).
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


def json_in_answer(text: str, *, lists: bool = False) -> object:
    """The first readable JSON candidate of `text`: fenced blocks, the whole text, then the span
    from the first `{` to the last `}` (and `[`..`]` with `lists`). Raises `ValueError` saying why not."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    stripped = text.strip()
    candidates.append(stripped)
    for open_, close in (("{", "}"), ("[", "]"))[: 2 if lists else 1]:
        first, last = stripped.find(open_), stripped.rfind(close)
        if 0 <= first < last:
            candidates.append(stripped[first: last + 1])
    error = "no JSON object found"
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = f"JSON syntax error at line {exc.lineno} column {exc.colno}: {exc.msg}"
    raise ValueError(error)
