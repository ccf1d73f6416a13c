"""Read the executor's answer: a unified diff, NEED_CONTEXT / NEED_FILE lines, NO_CHANGE, or ASK_USER.

The diff itself is validated by `PatchStore.stage`; here we only find it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from deepseek_ls.patch.editblock import EditBlock, has_edit_blocks, parse_edit_blocks
from deepseek_ls.patch.model import PatchError

# A fence is 3+ backticks or tildes; it closes with the same character, at least as many, on a
# line of its own (CommonMark). Models use ```` or ~~~ when the diff itself contains ``` lines.
_FENCE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)^[ \t]{0,3}(?P=fence)(?P=fence)?[`~]*[ \t]*$",
    re.DOTALL | re.MULTILINE,
)
_NEED_CONTEXT = re.compile(r"^NEED_CONTEXT\|([^:\s|]+)(?::(\d+)-(\d+))?\s*$")


class ExecutorParseError(ValueError):
    pass


@dataclass
class ContextRequest:
    path: str
    start: int | None = None
    end: int | None = None


@dataclass
class ExecutorAnswer:
    kind: Literal["diff", "edit_blocks", "need_context", "need_file", "no_change", "ask_user"]
    diff: str = ""
    edit_blocks: list[EditBlock] = field(default_factory=list)
    context: list[ContextRequest] = field(default_factory=list)
    need_files: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""


def parse_executor_answer(text: str) -> ExecutorAnswer:
    text = text or ""
    lines = [ln.strip() for ln in text.splitlines()]
    for ln in lines:
        if ln.startswith("ASK_USER|"):
            return ExecutorAnswer("ask_user", reason=ln.partition("|")[2].strip())
    needs = [ln for ln in lines if ln.startswith("NEED_FILE|")]
    if needs:
        pairs = []
        for ln in needs:
            parts = ln.split("|")
            pairs.append((parts[1].strip(), "|".join(parts[2:]).strip()))
        return ExecutorAnswer("need_file", need_files=pairs)
    diff = extract_diff(text)
    if diff:
        return ExecutorAnswer("diff", diff=diff)
    if has_edit_blocks(text):
        try:
            blocks = parse_edit_blocks(text)
        except PatchError as exc:
            raise ExecutorParseError(str(exc)) from None
        return ExecutorAnswer("edit_blocks", edit_blocks=blocks)
    requests = []
    for ln in lines:
        m = _NEED_CONTEXT.match(ln)
        if m:
            start, end = (int(m.group(2)), int(m.group(3))) if m.group(2) else (None, None)
            requests.append(ContextRequest(m.group(1), start, end))
    if requests:
        return ExecutorAnswer("need_context", context=requests)
    for ln in lines:
        if ln.startswith("NO_CHANGE"):
            return ExecutorAnswer("no_change", reason=ln.partition("|")[2].strip() or "no change needed")
    raise ExecutorParseError("no unified diff, SEARCH/REPLACE block, NEED_CONTEXT|, NEED_FILE| or NO_CHANGE| line found")


def extract_diff(text: str) -> str:
    """The diff in fenced ```diff blocks (all of them, joined) or the bare diff starting at its first header."""
    blocks = [b for b in fenced_blocks(text) if _looks_like_diff(b)]
    if blocks:
        return "".join(b if b.endswith("\n") else b + "\n" for b in blocks)
    lines = text.splitlines(keepends=True)
    for i, ln in enumerate(lines):
        if ln.startswith("diff --git ") or (
            ln.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        ):
            body = "".join(lines[i:])
            return body if body.endswith("\n") else body + "\n"
    return ""


def fenced_blocks(text: str, *, info: str | None = None) -> list[str]:
    """The bodies of the fenced code blocks in `text` (any fence length, backticks or tildes),
    optionally only those whose info string starts with `info`."""
    out = []
    for m in _FENCE.finditer(text):
        if info is None or m.group("info").strip().startswith(info):
            out.append(m.group("body"))
    return out


def _looks_like_diff(block: str) -> bool:
    return ("--- " in block and "+++ " in block) or block.lstrip().startswith("diff --git")
