"""SEARCH/REPLACE edit blocks (Aider's editblock, Claude Code's Edit) -> a unified diff.

A block names a file, the exact lines to find and what replaces them:

    path/to/file.py
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

Each block becomes one hunk *without line numbers* (``@@ ... @@``), so the
patch store places it by its text alone, with the same match ladder as any
hunk, and refuses it when the search text occurs more than once (it must match
uniquely). An empty SEARCH creates a file that does not exist yet. The
result is an ordinary diff: whatever the format, the answer becomes one
`PatchSet`. The prompt that asks for this format is in `editblock_prompts.py`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from deepseek_ls.patch.model import PatchError

_SEARCH = re.compile(r"^\s*<{5,9} SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass
class EditBlock:
    path: str
    search: str  # with line endings; "" creates the file
    replace: str


def has_edit_blocks(text: str) -> bool:
    return any(_SEARCH.match(line) for line in text.splitlines())


def parse_edit_blocks(text: str) -> list[EditBlock]:
    """Every SEARCH/REPLACE block of an answer; the file name is the nearest non-fence line above
    the block (or the previous block's file). Raises `PatchError` for a malformed block."""
    lines = text.splitlines(keepends=True)
    blocks: list[EditBlock] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        named = _filename_above(lines, i)
        path = named or path
        if not path:
            raise PatchError(f"SEARCH/REPLACE block at answer line {i + 1} names no file; put the file's path on the line above it")
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j]):
            if _SEARCH.match(lines[j]) or _REPLACE.match(lines[j]):
                raise PatchError(f"SEARCH/REPLACE block for {path} at answer line {i + 1} has no ======= divider")
            j += 1
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k]):
            if _SEARCH.match(lines[k]) or _DIVIDER.match(lines[k]):
                raise PatchError(f"SEARCH/REPLACE block for {path} at answer line {i + 1} has no >>>>>>> REPLACE end")
            k += 1
        if j >= len(lines) or k >= len(lines):
            raise PatchError(f"SEARCH/REPLACE block for {path} at answer line {i + 1} is not closed (>>>>>>> REPLACE)")
        blocks.append(EditBlock(path, "".join(lines[i + 1 : j]), "".join(lines[j + 1 : k])))
        i = k + 1
    return blocks


def _filename_above(lines: list[str], i: int) -> str | None:
    for back in range(i - 1, max(i - 4, -1), -1):
        candidate = lines[back].strip()
        if not candidate or _FENCE.match(candidate):
            continue
        candidate = candidate.strip("`*:# ").removeprefix("a/").removeprefix("b/")
        if candidate and " " not in candidate and ("." in candidate or "/" in candidate):
            return candidate
        return None
    return None


def edit_blocks_to_diff(blocks: list[EditBlock], exists) -> str:
    """A unified diff with one unnumbered hunk per block (`exists(path)` tells creation from edit)."""
    out: list[str] = []
    by_file: dict[str, list[EditBlock]] = {}
    for block in blocks:
        by_file.setdefault(block.path, []).append(block)
    for path, file_blocks in by_file.items():
        creating = not exists(path)
        if creating and any(b.search.strip() for b in file_blocks):
            raise PatchError(f"{path} does not exist, so its SEARCH text cannot be found; leave SEARCH empty to create it")
        out.append(f"--- {'/dev/null' if creating else 'a/' + path}\n+++ b/{path}\n")
        for block in file_blocks:
            old, new = _lines(block.search), _lines(block.replace)
            if old == new:
                continue
            if creating:
                out.append(f"@@ -0,0 +1,{len(new)} @@\n")
            elif not old:
                raise PatchError(f"a SEARCH/REPLACE block for {path} has an empty SEARCH but the file exists; "
                                 "quote the exact lines to replace")
            else:
                out.append("@@ ... @@\n")
            out += [f"-{line}" for line in old] + [f"+{line}" for line in new]
    diff = "".join(out)
    if "@@" not in diff:
        raise PatchError("the SEARCH/REPLACE blocks change nothing (each REPLACE equals its SEARCH)")
    return diff


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


# -- the `edit_file` tool: the same edit as a function call (Claude Code's Edit) ------------

EDIT_TOOL = "edit_file"


def edit_tool_schema() -> dict:
    return {"type": "function", "function": {
        "name": EDIT_TOOL,
        "description": ("Replace old_string with new_string in one file. old_string must be copied exactly "
                        "from the file and occur exactly once in it; an empty old_string creates the file."),
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "workspace-relative path"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
        }, "required": ["path", "old_string", "new_string"]},
    }}


def blocks_from_edit_calls(arguments: list[str], files: dict[str, str | None]) -> list[EditBlock]:
    """`edit_file` calls (their JSON arguments) as edit blocks. An `old_string` that is part of a
    line is widened to its whole lines when it occurs exactly once in the file's text (`files`);
    otherwise it is matched line by line like any SEARCH text."""
    blocks = []
    for raw in arguments:
        try:
            args = json.loads(raw or "{}")
            path, old, new = args["path"], args["old_string"], args["new_string"]
            if not all(isinstance(v, str) for v in (path, old, new)):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise PatchError(f"an {EDIT_TOOL} call needs JSON arguments path, old_string, new_string (strings); got {raw[:200]!r}") from None
        text = files.get(path)
        if text is not None and old and text.count(old) > 1:
            raise PatchError(f"{EDIT_TOOL}: old_string occurs {text.count(old)} times in {path}; include more of the "
                             "surrounding text so it occurs exactly once")
        if text is not None and old and text.count(old) == 1:
            at = text.index(old)
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at + len(old))
            end = len(text) if end < 0 else end + 1
            whole = text[start:end]
            blocks.append(EditBlock(path, whole, whole.replace(old, new, 1)))
        else:
            blocks.append(EditBlock(path, old, new))
    return blocks


def render_blocks(blocks: list[EditBlock]) -> str:
    """Edit blocks as the SEARCH/REPLACE text an answer would carry (for the transcript)."""
    def eol(s: str) -> str:
        return s if not s or s.endswith("\n") else s + "\n"
    return "".join(f"{b.path}\n<<<<<<< SEARCH\n{eol(b.search)}=======\n{eol(b.replace)}>>>>>>> REPLACE\n\n" for b in blocks)
