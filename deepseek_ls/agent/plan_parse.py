"""Turn a planner's answer into a `Plan`.

Two contracts are accepted (docs/agent.md, "The loop"):

* the JSON plan v1 (`plan.py`), in a fenced ```json block or bare;
* the line protocol::

      ARCHITECT_PLAN_V1
      PLAN|<step text>
      FILE|<path>|<intent>
      VERIFY|<command>
      ACCEPT|<criterion>
      NO_EDIT|true|<reason>
      ARCHITECT_PLAN_END

Anything else raises `PlanParseError` whose message is fed back to the model on
the re-ask, so it must say exactly what was wrong.
"""

from __future__ import annotations

from pydantic import ValidationError

from deepseek_ls.agent.answer_json import json_in_answer
from deepseek_ls.agent.plan import Plan, Step

LINE_BEGIN = "ARCHITECT_PLAN_V1"
LINE_END = "ARCHITECT_PLAN_END"

class PlanParseError(ValueError):
    """The model's answer is not a valid plan; the message says why."""


def parse_plan(text: str) -> Plan:
    """Parse either contract; raise `PlanParseError` naming the problem."""
    if not text or not text.strip():
        raise PlanParseError("the answer was empty; expected a JSON plan or an ARCHITECT_PLAN_V1 block")
    if LINE_BEGIN in text:
        return parse_line_protocol(text)
    return parse_json_plan(text)


def parse_json_plan(text: str) -> Plan:
    data = _extract_json(text)
    if not isinstance(data, dict):
        raise PlanParseError("the JSON plan must be an object with goal and steps")
    if isinstance(data.get("plan"), dict):
        data = data["plan"]
    if not str(data.get("goal", "")).strip():
        raise PlanParseError("the JSON plan has no 'goal'")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        if data.get("no_edit_reason"):
            steps = []
        else:
            raise PlanParseError("the JSON plan has no 'steps' (a non-empty list is required)")
    # Ids are ours to assign: the model's ids are not trusted to be unique.
    clean = {k: v for k, v in data.items() if k not in ("plan_id", "version")}
    clean["steps"] = [_step_from_json(i, s) for i, s in enumerate(steps)]
    try:
        return Plan.model_validate(clean)
    except ValidationError as exc:
        raise PlanParseError(f"the JSON plan is invalid: {_first_error(exc)}") from None


def _step_from_json(index: int, raw: object) -> Step:
    if isinstance(raw, str):
        raw = {"title": raw}
    if not isinstance(raw, dict):
        raise PlanParseError(f"step {index + 1} must be an object with a title")
    fields = {k: v for k, v in raw.items() if k not in ("step_id", "status", "done")}
    if "title" not in fields and "intent" in fields:
        fields["title"] = str(fields["intent"])
    try:
        return Step.model_validate(fields)
    except ValidationError as exc:
        raise PlanParseError(f"step {index + 1} is invalid: {_first_error(exc)}") from None


def _extract_json(text: str) -> object:
    try:
        return json_in_answer(text)
    except ValueError as exc:
        raise PlanParseError(f"could not read a plan: {exc}") from None


def parse_line_protocol(text: str) -> Plan:
    lines = [ln.strip() for ln in text.splitlines()]
    try:
        start = lines.index(LINE_BEGIN)
    except ValueError:
        raise PlanParseError(f"'{LINE_BEGIN}' must be on a line of its own") from None
    try:
        end = lines.index(LINE_END, start + 1)
    except ValueError:
        raise PlanParseError(f"the plan block is not closed with '{LINE_END}'") from None
    step_texts: list[str] = []
    files: list[tuple[str, str]] = []
    verify: list[str] = []
    accept: list[str] = []
    no_edit: str | None = None
    for number, line in enumerate(lines[start + 1 : end], start=start + 2):
        if not line or line.startswith("#"):
            continue
        tag, _, rest = line.partition("|")
        parts = rest.split("|")
        if tag == "PLAN" and rest.strip():
            step_texts.append(rest.strip())
        elif tag == "FILE" and parts[0].strip():
            files.append((parts[0].strip(), "|".join(parts[1:]).strip() or "edit"))
        elif tag == "VERIFY" and rest.strip():
            verify.append(rest.strip())
        elif tag == "ACCEPT" and rest.strip():
            accept.append(rest.strip())
        elif tag == "NO_EDIT":
            no_edit = "|".join(parts[1:]).strip() or "no edit needed"
        else:
            raise PlanParseError(
                f"line {number} is not part of the protocol: {line[:80]!r} "
                "(expected PLAN|, FILE|, VERIFY|, ACCEPT| or NO_EDIT| lines)"
            )
    if not step_texts and not no_edit:
        raise PlanParseError("the plan block has no PLAN| lines")
    if not files and not no_edit:
        raise PlanParseError("the plan block has no FILE| lines; every edit plan must name its files")
    try:
        steps = _line_steps(step_texts, files)
        return Plan(
            goal=step_texts[0] if step_texts else (no_edit or "no edit"),
            steps=steps,
            verification=verify,
            acceptance=accept,
            no_edit_reason=no_edit,
        )
    except ValidationError as exc:
        raise PlanParseError(f"the plan block is invalid: {_first_error(exc)}") from None


def _line_steps(step_texts: list[str], files: list[tuple[str, str]]) -> list[Step]:
    """The line protocol has no step↔file link: one step per FILE line, titled by its PLAN line.

    With as many PLAN lines as FILE lines they pair up in order; otherwise every
    PLAN line becomes the title of the whole change and each file its own step.
    """
    if not files:
        return [Step(title=t, intent="analysis") for t in step_texts]
    if len(step_texts) == len(files):
        return [Step(title=t, intent=i, files=[p]) for t, (p, i) in zip(step_texts, files)]
    return [Step(title=f"{i}: {p}", intent=i, files=[p]) for p, i in files]


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "plan"
    return f"{where}: {err.get('msg', 'invalid')}"
