"""Typed arguments of our commands and custom requests, validated once at the edge
(loaded on first use through `params`).

Every command takes ONE JSON object (docs/protocol.md); pygls hands it to us as
a plain dict and `parse_args` turns it into one of these models, or raises
`ArgsError` with a message that names the bad field.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ArgsError(ValueError):
    """Arguments that do not match the command's shape."""


class _Args(BaseModel):
    # Clients may send more than we need (e.g. a whole lens payload): ignore extras.
    model_config = ConfigDict(extra="ignore")


class Position(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(_Args):
    start: Position
    end: Position


class AskArgs(_Args):
    prompt: str = Field(min_length=1)
    uri: str | None = None
    range: Range | None = None
    session_id: str | None = None


class PlanArgs(AskArgs):
    mode: Literal["plan", "agent", "yolo"] | None = None


class StepArgs(_Args):
    session_id: str
    step_id: str


class ReviseArgs(_Args):
    session_id: str
    feedback: str = ""
    step_id: str | None = None


class SessionArgs(_Args):
    session_id: str


class OptionalSessionArgs(_Args):
    session_id: str | None = None


class HunkArgs(_Args):
    patch_id: str
    hunk_id: str


class FileArgs(_Args):
    patch_id: str
    uri: str


class AllArgs(_Args):
    patch_id: str | None = None


class ApproveArgs(_Args):
    request_id: str
    always: bool = False


class DenyArgs(_Args):
    request_id: str
    reason: str = ""


class AnswerArgs(_Args):
    question_id: str
    answer: str | None  # null cancels the question


class ExplainArgs(_Args):
    session_id: str | None = None
    decision_id: str | None = None
    step_id: str | None = None
    patch_id: str | None = None


class UriArgs(_Args):
    uri: str


M = TypeVar("M", bound=BaseModel)


def parse_args(model: type[M], raw: Any) -> M:
    """Validate `raw` (a dict, a namedtuple from pygls, or None) as `model`."""
    data = to_plain(raw) if raw is not None else {}
    if not isinstance(data, dict):
        raise ArgsError(f"expected one JSON object argument, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(argument)'}: {e['msg']}" for e in error.errors()
        )
        raise ArgsError(f"invalid arguments: {problems}") from None


def to_plain(value: Any) -> Any:
    """pygls delivers custom-request params as nested namedtuples: back to dicts."""
    if hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value
