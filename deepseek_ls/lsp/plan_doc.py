"""The plan document (`.deepseek/plans/<session>.md`) and where steps go in files.

Pure functions over plan JSON (docs/protocol.md, "Plan JSON"): render the
document the editor opens, read back the comments the person wrote under each
step (lines starting with ``>``), and find the line of a step's relevant symbol
in a target file.
"""

from __future__ import annotations

import re
from typing import Any

COMMENT_PREFIX = ">"
_STEP_HEADING = re.compile(r"^## Step (\d+): ")
_STEP_ID = re.compile(r"<!-- step_id: (\S+) -->")
_IDENT = re.compile(r"`([A-Za-z_][\w.]*)\(?\)?`|\b([A-Za-z_]\w*_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)\b")
_DEF = r"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?(?:def|class|function|fn|func|struct|interface|type|enum|trait|impl|const|let|var|pub\s+fn)\s+{name}\b"


def status_mark(status: str) -> str:
    return {"pending": "○", "running": "◐", "done": "✓", "failed": "✗", "skipped": "⤼"}.get(status, "?")


def render(session_id: str, plan: dict[str, Any], comments: dict[str, list[str]] | None = None,
           *, research: str | None = None) -> str:
    """The plan as markdown; `comments` (by step_id, plus "" for general ones) are kept;
    `research`: a Hetun session's research tree, as a last section."""
    comments = comments or {}
    out = [
        f"# Plan: {plan.get('goal', '')}",
        "",
        f"<!-- deepseek-ls plan document — session {session_id}, plan v{plan.get('version', 1)}. "
        "Write comments as lines starting with '>' under a step (or here for the whole plan), "
        "then use Revise… to send them with the next revision. -->",
        "",
    ]
    out += [*comments.get("", []), ""] if comments.get("") else []
    if plan.get("assumptions"):
        out += ["Assumptions:", *[f"- {a}" for a in plan["assumptions"]], ""]
    for n, step in enumerate(plan.get("steps", []), start=1):
        out.append(f"## Step {n}: {step.get('title', '')}  [{status_mark(step.get('status', 'pending'))} {step.get('status', 'pending')}]")
        out.append(f"<!-- step_id: {step.get('step_id')} -->")
        if step.get("files"):
            out.append("Files: " + ", ".join(step["files"]))
        out.append(f"Intent: {step.get('intent', 'edit')}")
        out.append("")
        if comments.get(step.get("step_id", "")):
            out += [*comments[step["step_id"]], ""]
    if plan.get("verification"):
        out += ["## Verification", *[f"- `{v}`" for v in plan["verification"]], ""]
    if plan.get("risk_notes"):
        out += ["## Risks", *[f"- {r}" for r in plan["risk_notes"]], ""]
    if research:
        out += ["## Research (Hetun)", "```", research, "```", ""]
    return "\n".join(out).rstrip() + "\n"


def step_heading_lines(text: str) -> dict[str, int]:
    """step_id -> 0-based line of its heading in a plan document."""
    lines = text.splitlines()
    found: dict[str, int] = {}
    for i, line in enumerate(lines):
        if _STEP_HEADING.match(line) and i + 1 < len(lines):
            m = _STEP_ID.search(lines[i + 1])
            if m:
                found[m.group(1)] = i
    return found


def read_comments(text: str) -> dict[str, list[str]]:
    """Comment lines (starting with '>') by step_id; "" holds the general ones."""
    comments: dict[str, list[str]] = {}
    current = ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## "):
            current = "#other"
            if _STEP_HEADING.match(line) and i + 1 < len(lines):
                m = _STEP_ID.search(lines[i + 1])
                current = m.group(1) if m else "#other"
            continue
        if line.lstrip().startswith(COMMENT_PREFIX):
            comments.setdefault("" if current == "#other" else current, []).append(line.strip())
    return comments


def feedback_from_comments(plan: dict[str, Any], comments: dict[str, list[str]], step_id: str | None) -> str:
    """The comments as revision feedback, each under its step's title."""
    titles = {s.get("step_id"): (n, s.get("title", "")) for n, s in enumerate(plan.get("steps", []), start=1)}
    parts = []
    for key, lines in comments.items():
        if step_id and key not in (step_id, ""):
            continue
        text = "\n".join(line.lstrip(COMMENT_PREFIX).strip() for line in lines).strip()
        if not text:
            continue
        if key in titles:
            n, title = titles[key]
            parts.append(f"On step {n} ({title}):\n{text}")
        else:
            parts.append(text)
    return "\n\n".join(parts)


def symbol_candidates(title: str) -> list[str]:
    """Identifiers a step title names (`backticked`, snake_case or camelCase words)."""
    names: list[str] = []
    for m in _IDENT.finditer(title):
        name = (m.group(1) or m.group(2) or "").split(".")[-1]
        if name and name not in names:
            names.append(name)
    return names


def symbol_line(text: str, title: str) -> int:
    """0-based line defining a symbol the step title names, else 0."""
    for name in symbol_candidates(title):
        definition = re.compile(_DEF.format(name=re.escape(name)), re.MULTILINE)
        # Only lines that mention the name can define it: check those alone.
        at = text.find(name)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if definition.match(text, start, end if end != -1 else len(text)):
                return text.count("\n", 0, start)
            at = text.find(name, end if end != -1 else len(text))
    return 0
