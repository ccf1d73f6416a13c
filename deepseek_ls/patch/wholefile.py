"""Whole-file answers -> a unified diff.

Small models often answer with the whole corrected file in a code block instead
of a diff. When the block is introduced by the file's path, the file is small
(`max_lines`) and the block is plainly the whole file rather than a snippet (at
least half as long as the file), the difference between the file and the block
becomes an ordinary numbered diff, staged like any other.
"""

from __future__ import annotations

import difflib
import re

_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n`]*$")


def whole_file_blocks(answer: str, files: dict[str, str | None]) -> dict[str, str]:
    """`{path: new text}` for every fenced block in `answer` announced by one of `files`' paths
    (on one of the two lines above the fence)."""
    lines = answer.splitlines(keepends=True)
    found: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i].rstrip("\r\n"))
        if not m:
            i += 1
            continue
        fence = m.group(1)
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            j += 1
        if j >= len(lines):
            break
        above = " ".join(lines[k] for k in range(max(0, i - 2), i))
        for path in files:
            if re.search(rf"(^|[\s`*'\"(/]){re.escape(path)}($|[\s`*'\":)])", above):
                found[path] = "".join(lines[i + 1 : j])
                break
        i = j + 1
    return found


def whole_file_diff(path: str, old: str | None, new: str, *, max_lines: int) -> str | None:
    """The diff turning `old` into `new`, or None when `new` does not look like the whole file
    (the file is too big for this format, or the block is much shorter than the file)."""
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    if len(old_lines) > max_lines or (old_lines and len(new_lines) * 2 < len(old_lines)):
        return None
    if old is not None and old.endswith("\n") and new_lines and not new.endswith("\n"):
        new_lines[-1] += "\n"
    if new_lines == old_lines:
        return None
    diff = difflib.unified_diff(old_lines, new_lines, "/dev/null" if old is None else f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)


def _closes(line: str, fence: str) -> bool:
    mark = line.strip()
    return len(mark) >= len(fence) and set(mark) == {fence[0]}
