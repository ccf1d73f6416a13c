"""How the executor is asked for each edit format, beside the parsers of the answers
(`parse.py` for unified diffs, `editblock.py`, `wholefile.py`)."""

from __future__ import annotations

UDIFF = """\
Answer with edits as a unified diff (```diff fenced, or bare), with `--- a/<path>` and
`+++ b/<path>` headers and correct @@ hunk headers, against the exact file contents you were
given. Each hunk's context and removed lines must be copied exactly from the file."""

EDITBLOCK = """\
Answer with SEARCH/REPLACE blocks, one per change. Put the file's path alone on the line
above each block:

path/to/file.py
<<<<<<< SEARCH
the exact lines to replace, copied from the file (enough of them to occur only once)
=======
the lines that replace them
>>>>>>> REPLACE

SEARCH must match the file exactly and occur exactly once in it. To create a file, leave
SEARCH empty. Several blocks may follow each other; they are applied in order."""

WHOLE = """\
Answer with the complete new content of each file you change: the file's path alone on a line,
then the whole file in one fenced code block. Do not abbreviate or elide anything."""

FORMATS = {"udiff": UDIFF, "editblock": EDITBLOCK, "whole": WHOLE}


def instructions(edit_format: str) -> str:
    return FORMATS.get(edit_format, UDIFF)


def fallback_message(failures: int) -> str:
    return (
        f"Your unified diffs could not be applied {failures} times. Switch format now.\n\n" + EDITBLOCK
    )
