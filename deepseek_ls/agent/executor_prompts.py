"""The executor's prompts, beside the parser of its answers (`executor_parse.py`).

Stable prefix first (system prompt, repo map, the plan), then the step's
files, then the step and any feedback (patch errors, verification output):
DeepSeek's prompt cache bills a repeated prefix at a fraction of the price.
"""

from __future__ import annotations

import json

from deepseek_ls.patch import editblock_prompts as edit_formats

_SYSTEM = """\
You are the executor of deepseek-ls, a coding agent. You carry out ONE step of a plan.

{format}
Edit only the files the step declares. Nothing is written until the user accepts it.

If you need to see more of a file first, answer only with lines
NEED_CONTEXT|<path>[:<start>-<end>]
and you will get the content. If the step needs a file it does not declare, answer
NEED_FILE|<path>|<why> and the plan will be revised.
If the step needs no change, answer NO_CHANGE|<reason>.
A comment line whose text starts with `deepseek:` is a request the person wrote for you: the edit
that does what it asks also deletes that comment line.
"""


def system(edit_format: str = "udiff") -> str:
    """The system prompt asking for `edit_format` (stable per model: part of the cached prefix)."""
    return _SYSTEM.format(format=edit_formats.instructions(edit_format))


SYSTEM = system("udiff")


REPO_MAP = "Repository map (files and their top-level symbols):\n{repo_map}"


def plan_message(plan: dict) -> str:
    """The plan without step statuses: it stays byte-identical for every step (prompt-cache prefix)."""
    steps = [
        f"{i}. {s['title']} (files: {', '.join(s.get('files') or []) or '-'})"
        for i, s in enumerate(plan.get("steps", []), start=1)
    ]
    return f"Plan goal: {plan.get('goal', '')}\nSteps:\n" + "\n".join(steps)


def files_message(files: dict[str, str | None]) -> str:
    blocks = []
    for path, text in files.items():
        if text is None:
            blocks.append(f"{path}: (does not exist yet; create it with a diff from /dev/null)")
        else:
            blocks.append(f"{path}:\n```\n{text}\n```")
    return "Current contents of the step's files:\n\n" + "\n\n".join(blocks)


def step_message(step: dict, feedback: str | None) -> str:
    text = (
        f"Step: {step['title']}\nIntent: {step.get('intent', 'edit')}\n"
        f"Files you may edit: {json.dumps(step.get('files', []))}"
    )
    if feedback:
        text += f"\n\nFeedback from the previous attempt:\n{feedback.strip()}"
    return text


def context_message(blocks: list[str]) -> str:
    return "Requested context:\n\n" + "\n\n".join(blocks)


def reask_message(error: str) -> str:
    return (
        f"Your answer could not be used: {error}.\n"
        "Answer with the edits of the step's files (in the format asked for), NEED_CONTEXT| lines, "
        "NEED_FILE| or NO_CHANGE|."
    )


def resend_message(error: Exception) -> str:
    """Some hunks were placed, others not: ask only for the failed ones (Aider's approach)."""
    return (
        f"some hunks of your diff could not be placed in the file: {error}\n"
        "The other hunks are fine and are kept. Resend ONLY the failed hunks, corrected against the "
        "exact file lines (with their --- / +++ file headers)"
    )
