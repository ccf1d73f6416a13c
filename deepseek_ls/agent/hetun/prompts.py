"""Prompts of the Hetun research phase, beside the parsers of their answers."""

from __future__ import annotations

import re

from deepseek_ls.agent.hetun.validate import HELPERS

COORDINATOR_SYSTEM = f"""You coordinate the research phase of a coding agent (Hetun mode).
You see the user's request, a map of the repository and index hits. Choose the slices of code
that cheap sub-agents should read, one per line:
SLICE|<workspace path>            (a file)
SLICE|<workspace path>:<a>-<b>    (lines a..b of a file)
SLICE|symbol:<Name>               (where a function or class is defined)
You may add ONE fenced ```python block that gathers context with these helpers only (no imports,
no def/class/while, no attributes starting with '_'): {", ".join(HELPERS)}.
`ask_fast(prompt, context)` asks a fast sub-agent; `finding(text, relevance)` records a finding;
`result(value)` returns a value. Keep it short. Answer NONE when no slice is needed."""

SUB_SYSTEM = """You are a research sub-agent of a coding agent. You see ONE slice of a repository and
the user's request. Report only what in this slice matters for the request, one line each:
FINDING|<relevance 0.0-1.0>|<one precise sentence: what, where (path:line), why it matters>
FOLLOWUP|<workspace path or symbol:Name>|<why it should be read next>
Answer NOTHING when the slice is irrelevant."""

CROSSCHECK_SYSTEM = """You verify one finding of a research phase against the code it cites.
Answer one line: CONFIRMED|<why>, REFUTED|<why> or UNSURE|<why>."""

HELPER_SYSTEM = "You are a fast research sub-agent. Answer briefly and precisely."

_FINDING = re.compile(r"^\s*FINDING\s*\|\s*([0-9.]+)\s*\|\s*(.+?)\s*$")
_FOLLOWUP = re.compile(r"^\s*FOLLOWUP\s*\|\s*([^|]+?)\s*(?:\|.*)?$")
_SLICE = re.compile(r"^\s*SLICE\s*\|\s*(\S+)\s*$")
_VERDICT = re.compile(r"^\s*(CONFIRMED|REFUTED|UNSURE)\s*\|?\s*(.*)$", re.IGNORECASE)
_PYTHON = re.compile(r"```python\s*\n(.*?)```", re.DOTALL)


def sub_prompt(request: str, target: str, text: str) -> str:
    return f"Request: {request}\n\nSlice: {target}\n```\n{text}\n```"


def crosscheck_prompt(request: str, finding: str, target: str, text: str) -> str:
    return f"Request: {request}\n\nFinding to verify: {finding}\n\nCode ({target}):\n```\n{text}\n```"


def coordinator_prompt(request: str, repo_map: str, hits: str, max_slices: int) -> str:
    return (f"Request: {request}\n\nRepository map:\n{repo_map}\n\nIndex hits:\n{hits or '(none)'}\n\n"
            f"Choose at most {max_slices} slices.")


def parse_sub(answer: str) -> tuple[list[dict], list[str]]:
    """(findings [{text, relevance}], follow-up targets) of a sub-query's answer."""
    findings: list[dict] = []
    followups: list[str] = []
    for line in answer.splitlines():
        m = _FINDING.match(line)
        if m:
            try:
                relevance = max(0.0, min(1.0, float(m.group(1))))
            except ValueError:
                relevance = 0.5
            findings.append({"text": m.group(2)[:500], "relevance": relevance})
            continue
        m = _FOLLOWUP.match(line)
        if m and m.group(1) not in followups:
            followups.append(m.group(1).strip())
    return findings[:20], followups[:10]


def parse_coordinator(answer: str) -> tuple[list[str], str | None]:
    """(slice targets, helper block source or None)."""
    slices = []
    for line in answer.splitlines():
        m = _SLICE.match(line)
        if m and m.group(1) not in slices:
            slices.append(m.group(1))
    block = _PYTHON.search(answer)
    return slices, block.group(1) if block else None


def parse_verdict(answer: str) -> tuple[str, str]:
    for line in answer.splitlines():
        m = _VERDICT.match(line)
        if m:
            return m.group(1).lower(), m.group(2).strip()[:300]
    return "unsure", answer.strip()[:300]
