"""Typed arguments of our commands and custom requests, validated once at the edge
(loaded on first use through `params`).

Every command takes ONE JSON object (docs/protocol.md); pygls hands it to us as
a plain dict and `parse_args` turns it into one of these models, or raises
`ArgsError` with a message that names the bad field.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from deepseek_ls.lsp.arguments import ArgsError
from deepseek_ls.lsp.transport.decoding import uri_problem

__all__ = ["ArgsError", "parse_args"]


_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def _check_id(value: str) -> str:
    # Ids name files (patches, sessions): no separators, no control characters, bounded.
    if not _ID.fullmatch(value):
        raise ValueError("not an id: 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit")
    return value


def _check_uri(value: str) -> str:
    problem = uri_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


Id = Annotated[str, AfterValidator(_check_id)]
Uri = Annotated[str, AfterValidator(_check_uri)]


class _Args(BaseModel):
    # Clients may send more than we need (e.g. a whole lens payload): ignore extras.
    # Strict: `"always": "yes"` or `"line": "3"` is an error, never coerced into a decision.
    model_config = ConfigDict(extra="ignore", strict=True)


class Position(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Range(_Args):
    start: Position
    end: Position


class EditorDiagnostic(_Args):
    """A diagnostic the editor shows (LSP `Diagnostic`; its other fields are ignored)."""

    range: Range
    message: str = Field(max_length=20_000)
    severity: int | None = Field(default=None, ge=1, le=4)
    code: int | str | None = None
    source: str | None = Field(default=None, max_length=200)


class AskArgs(_Args):
    prompt: str = Field(min_length=1)
    uri: Uri | None = None
    range: Range | None = None
    session_id: Id | None = None
    # The file's diagnostics as the editor shows them (the clients send at most 20).
    diagnostics: list[EditorDiagnostic] = Field(default_factory=list, max_length=200)


class DiagnosticArgs(_Args):
    """`deepseek.fixDiagnostic` / `deepseek.explainDiagnostic`: a diagnostic of `uri` as the editor
    showed it at document `version` (a newer version is refused: the diagnostic may not hold)."""

    uri: Uri
    version: int | None = None
    range: Range | None = None  # the range the code action was asked for; default the diagnostic's
    diagnostic: EditorDiagnostic


class RunCommandArgs(_Args):
    """`deepseek.runCommand`: a custom command by name (without the slash) and its argument text."""

    name: str = Field(min_length=1, max_length=200)
    arguments: str = Field(default="", max_length=100_000)
    uri: Uri | None = None
    range: Range | None = None


class PlanArgs(AskArgs):
    mode: Literal["plan", "agent", "yolo", "hetun"] | None = None


class EditArgs(_Args):
    """`deepseek.edit`: an instruction run on one file. `line`: it is the `deepseek:` comment on that
    line (checked again before anything runs); else `range` is the person's selection. `version`:
    the document version the editor offered it for."""

    instruction: str = Field(min_length=1, max_length=10_000)
    uri: Uri
    line: int | None = Field(default=None, ge=0)
    range: Range | None = None
    version: int | None = None


class StepArgs(_Args):
    session_id: Id
    step_id: Id


class ReviseArgs(_Args):
    session_id: Id
    feedback: str = ""
    step_id: Id | None = None


class SessionArgs(_Args):
    session_id: Id


class MissionTextArgs(_Args):
    session_id: Id
    text: str | None = None  # the edited mission; default: the mission document's `## Mission` text


class ToggleArgs(_Args):
    enabled: bool | None = None  # unset: flip


class OptionalSessionArgs(_Args):
    session_id: Id | None = None


class CompactArgs(_Args):
    """`deepseek.compact`: the session (default: the active one) and what the summary must keep."""

    session_id: Id | None = None
    focus: str = Field(default="", max_length=2000)


class RewindArgs(_Args):
    """`deepseek.rewind`: back to before this session's prompt; `confirmed`: the editor asked already."""

    session_id: Id
    what: Literal["code", "conversation", "both"] = "both"
    confirmed: bool = False


class RedoRewindArgs(_Args):
    rewind_id: Id | None = None


class ReviewArgs(_Args):
    """`deepseek.review`: which change (default: the working tree against HEAD), limited to `paths`."""

    staged: bool = False
    base: str | None = Field(default=None, min_length=1, max_length=256)
    paths: list[str] = Field(default_factory=list, max_length=256)
    focus: str | None = Field(default=None, max_length=2000)


class FindingArgs(_Args):
    fingerprint: str = Field(pattern=r"^[0-9a-f]{32}$")


class HunkArgs(_Args):
    patch_id: Id
    hunk_id: Id


class FileArgs(_Args):
    patch_id: Id
    uri: Uri


class AllArgs(_Args):
    patch_id: Id | None = None


class ApproveArgs(_Args):
    request_id: Id
    always: bool = False


class DenyArgs(_Args):
    request_id: Id
    reason: str = ""


class AnswerArgs(_Args):
    question_id: Id
    answer: str | None  # null cancels the question


class ExplainArgs(_Args):
    session_id: Id | None = None
    decision_id: Id | None = None
    step_id: Id | None = None
    patch_id: Id | None = None


class McpStatusArgs(_Args):
    start: bool = False


class UriArgs(_Args):
    uri: Uri


M = TypeVar("M", bound=BaseModel)


def parse_args(model: type[M], raw: Any) -> M:
    """Validate `raw` (a dict, a namedtuple from pygls, or None) as `model`."""
    data = to_plain(raw) if raw is not None else {}
    if not isinstance(data, dict):
        raise ArgsError(f"expected one JSON object argument, got {_json_kind(data)}")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(argument)'}: {e['msg']}" for e in error.errors()
        )
        raise ArgsError(f"invalid arguments: {problems}") from None


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def to_plain(value: Any) -> Any:
    """pygls delivers custom-request params as nested namedtuples: back to dicts."""
    if hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value
