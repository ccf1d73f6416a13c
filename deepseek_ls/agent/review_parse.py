"""Turn a reviewer's answer into `Finding`s: the findings contract v1, read tolerantly.

The contract (`review_prompts.SYSTEM` shows it to the model)::

    {"findings": [{"file": "src/app.py", "start_line": 12, "end_line": 14,
                   "severity": "error|warning|note", "category": "bug|security|...",
                   "message": "...", "suggested_fix": "<unified diff of that file>"}],
     "summary": "..."}

Read tolerantly, as plans are: in a ```json fence or bare, wrapped in prose; a bare
list of findings; common spellings of the keys (`path`, `line`, `lines: "12-14"`,
`fix`); severities by their usual synonyms (critical/high -> error, medium -> warning,
low/info/nit -> note); an unknown category becomes `other`; a fix in a ```diff fence.
What cannot be read raises `FindingsParseError` whose message is fed back to the model
on the re-ask, so it says exactly what was wrong.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from deepseek_ls.agent.answer_json import json_in_answer

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")
CATEGORIES = ("bug", "security", "performance", "concurrency", "error-handling", "maintainability",
              "style", "tests", "docs", "other")

_SEVERITY_WORDS: dict[str, Severity] = {
    **{w: "error" for w in ("error", "critical", "blocker", "high", "major", "severe", "fatal")},
    **{w: "warning" for w in ("warning", "warn", "medium", "moderate")},
    **{w: "note" for w in ("note", "info", "information", "low", "minor", "nit", "nitpick", "suggestion", "hint")},
}
_CATEGORY_WORDS = {"correctness": "bug", "logic": "bug", "error handling": "error-handling", "errors": "error-handling",
                   "perf": "performance", "test": "tests", "testing": "tests", "documentation": "docs",
                   "readability": "maintainability", "design": "maintainability", "race": "concurrency"}
_DIFF_FENCE = re.compile(r"^\s*```(?:diff|patch|udiff)?[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)
_RANGE = re.compile(r"^\s*L?(\d+)\s*(?:(?:-|–|\.\.|:|to)\s*L?(\d+))?\s*$")


class FindingsParseError(ValueError):
    """The answer is not findings; the message says why."""


class Finding(BaseModel):
    """One finding of a review, as the contract has it (line numbers: the file after the change)."""

    file: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    severity: Severity
    category: str = "other"
    message: str
    suggested_fix: str | None = None


class FindingsAnswer(BaseModel):
    findings: list[Finding]
    summary: str = ""


def parse_findings(text: str) -> FindingsAnswer:
    """Read the answer; raise `FindingsParseError` naming the problem."""
    if not text or not text.strip():
        raise FindingsParseError('the answer was empty; expected a JSON object {"findings": [...]}')
    data = _extract_json(text)
    if isinstance(data, list):
        data = {"findings": data}
    if not isinstance(data, dict):
        raise FindingsParseError('the answer must be a JSON object {"findings": [...], "summary": "..."}')
    items = data.get("findings", data.get("issues", data.get("comments")))
    if items is None:
        raise FindingsParseError("the JSON object has no 'findings' list (use [] when there is nothing to report)")
    if not isinstance(items, list):
        raise FindingsParseError("'findings' must be a list")
    findings = [_finding(i, item) for i, item in enumerate(items)]
    summary = data.get("summary") or ""
    return FindingsAnswer(findings=findings, summary=summary if isinstance(summary, str) else json.dumps(summary))


def _finding(index: int, raw: object) -> Finding:
    where = f"finding {index + 1}"
    if not isinstance(raw, dict):
        raise FindingsParseError(f"{where} must be an object with file, start_line, severity and message")
    file = _first(raw, "file", "path", "filename", "file_path")
    if not isinstance(file, str) or not file.strip():
        raise FindingsParseError(f"{where} has no 'file'")
    start, end = _lines(raw, where)
    severity = _severity(_first(raw, "severity", "level", "priority"), where)
    message = _first(raw, "message", "description", "body", "comment", "text")
    title = raw.get("title")
    if isinstance(title, str) and title.strip():
        message = f"{title.strip()}: {message.strip()}" if isinstance(message, str) and message.strip() else title
    if not isinstance(message, str) or not message.strip():
        raise FindingsParseError(f"{where} ({file}) has no 'message'")
    fix = _first(raw, "suggested_fix", "fix", "suggestion_diff", "patch", "diff")
    return Finding(file=_clean_path(file), start_line=start, end_line=end, severity=severity,
                   category=_category(raw.get("category") or raw.get("type")), message=message.strip(),
                   suggested_fix=_fix(fix))


def _first(raw: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if raw.get(key) not in (None, ""):
            return raw[key]
    return None


def _lines(raw: dict[str, Any], where: str) -> tuple[int, int]:
    start = _first(raw, "start_line", "line", "start", "line_start", "from_line")
    end = _first(raw, "end_line", "end", "line_end", "to_line")
    lines = _first(raw, "lines", "line_range", "range")
    if start is None and lines is not None:
        if isinstance(lines, list) and lines:
            start, end = lines[0], lines[-1]
        elif isinstance(lines, dict):
            start, end = lines.get("start"), lines.get("end")
        else:
            start = lines
    if isinstance(start, str):
        m = _RANGE.match(start)
        if not m:
            raise FindingsParseError(f"{where}: line {start!r} is not a line number or a range like 12-14")
        start, end = int(m.group(1)), int(m.group(2)) if m.group(2) else end
    try:
        first = int(start) if start is not None and not isinstance(start, bool) else None
        last = int(end) if end is not None and not isinstance(end, bool) else first
    except (TypeError, ValueError):
        raise FindingsParseError(f"{where}: start_line and end_line must be line numbers") from None
    if first is None or last is None:
        raise FindingsParseError(f"{where} has no 'start_line'")
    if first < 1 or last < 1:
        raise FindingsParseError(f"{where}: line numbers start at 1")
    return min(first, last), max(first, last)


def _severity(value: object, where: str) -> Severity:
    word = str(value or "").strip().lower()
    if word not in _SEVERITY_WORDS:
        raise FindingsParseError(f"{where}: severity {value!r} is not one of error, warning, note")
    return _SEVERITY_WORDS[word]


def _category(value: object) -> str:
    word = str(value or "").strip().lower().replace("_", "-")
    word = _CATEGORY_WORDS.get(word, word)
    return word if word in CATEGORIES else "other"


def _fix(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    fenced = _DIFF_FENCE.match(value)
    text = fenced.group(1) if fenced else value
    return text if text.endswith("\n") else text + "\n"


def _clean_path(path: str) -> str:
    return path.strip().strip("`").strip()


def _extract_json(text: str) -> object:
    try:
        return json_in_answer(text, lists=True)
    except ValueError as exc:
        raise FindingsParseError(f"could not read the findings: {exc}") from None
