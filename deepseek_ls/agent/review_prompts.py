"""The reviewer's prompts, beside the parser of its answers (`review_parse.py`).

The diff is shown numbered: every line the model may cite carries its line number in
the file after the change (the old file's, for a deleted file), so findings name lines
that exist, and removed lines carry none. Message order keeps a stable prefix for the
prompt cache: the system prompt (with the project's instructions) first; the index
hits and the diff of this call last.
"""

from __future__ import annotations

from deepseek_ls.agent.review_diff import Chunk, ReviewedFile

SYSTEM = """\
You are the code reviewer of deepseek-ls. Review the change below as a careful senior engineer
reviews a pull request: find real problems the change introduces or exposes — bugs, security
holes, data loss, races, broken error handling, performance traps, missing tests for risky
logic, misleading names or docs. Do not report style nits a formatter would fix, and do not
praise. Report nothing rather than guess: an empty list is a good answer for a good change.

The diff is numbered: `  12 + text` is line 12 of the file after the change (added), `  12   text`
an unchanged line shown for context, `     - text` a removed line (it has no number any more).
A deleted file is numbered as it was.

Answer with ONE JSON object in a ```json block, and nothing else:
{"findings": [{"file": "path/as/in/the/diff", "start_line": 12, "end_line": 14,
               "severity": "error|warning|note", "category": "bug|security|performance|concurrency|error-handling|maintainability|style|tests|docs|other",
               "message": "what is wrong, why it matters, and what to do",
               "suggested_fix": "optional: a unified diff of that one file (--- a/path, +++ b/path, @@ hunks) that fixes it"}],
 "summary": "one or two sentences on the change as a whole"}

Rules:
- Cite only files and numbered lines of the diff below; findings elsewhere are discarded.
- severity: error = a defect that will bite (wrong result, crash, vulnerability, data loss);
  warning = likely a problem or a real risk; note = worth a look.
- A suggested_fix changes only the finding's file, against the file after the change, with
  exact context lines; leave it out when you are not sure of it.
- You cannot run anything or change files: this is a review only.
"""

INDEX_HITS = "Where the changed symbols are used elsewhere (index hits):\n{hits}"
AREAS = {"file": "the whole change", "part": "part {n} of {of} of the change to {path} (its other hunks are reviewed separately)"}


def render_chunk(chunk: Chunk) -> str:
    """The numbered diff of one review call."""
    head = AREAS["part"].format(n=chunk.part[0], of=chunk.part[1], path=chunk.files[0].path) if chunk.part else None
    parts = [f"This call reviews {head}." if head else f"The change ({len(chunk.files)} file(s)):"]
    parts += [_render_file(f) for f in chunk.files]
    return "\n\n".join(parts)


def _render_file(f: ReviewedFile) -> str:
    moved = f" (renamed from {f.old_path})" if f.old_path else ""
    out = [f"File: {f.path} [{f.status}{moved}]"]
    for hunk in f.hunks:
        section = f" {hunk.section}" if hunk.section else ""
        out.append(f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@{section}")
        for number, tag, text in f.numbered(hunk):
            mark = " " if tag == " " else tag
            out.append(f"{number if number is not None else '':>6} {mark} {text}")
    return "\n".join(out)


def request_message(chunk: Chunk, focus: str | None) -> str:
    ask = f"\n\nThe person asked to look especially at: {focus.strip()}" if focus and focus.strip() else ""
    return f"Review this change.{ask}\n\n{render_chunk(chunk)}"


def reask_message(error: str) -> str:
    return (
        f"Your answer could not be read as findings: {error}.\n"
        'Answer again with exactly one JSON object {"findings": [...], "summary": "..."} in a ```json block, '
        "and nothing else."
    )
