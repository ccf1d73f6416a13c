"""What a question is sent with: the workspace context `ask` gathers, from the editor and the CLI alike.

The messages keep a stable prefix for the prompt cache: the system prompt with the
project's instructions first, then the repository map; what depends on the
question (editor context, files the question names, index hits) comes last, just
before the question. Every read goes through the `World`, so it is recorded and
replay serves it back.
"""

from __future__ import annotations

import re
from typing import Any

from deepseek_ls.policy import PolicyViolation

ASK_SYSTEM = (
    "You are deepseek-ls, a coding assistant inside the user's editor. Answer the question "
    "about their code concisely, using the workspace context below; do not propose edits unless asked. "
    "Use Markdown code blocks for code."
)
REPO_MAP = "Repository map (files and their top-level symbols):\n{repo_map}"
MAX_NAMED_FILES = 4
# Fenced or inline code, and `@path` outside it: a file the person attached (`mentioned_paths`); `@` inside a word is not one.
MENTION = re.compile(r"(?<!\S)@([^\s@`]+)")
CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
# Words of the question that look like workspace paths: `src/app.py`, `README.md`, `lsp/hover.py`.
_PATHLIKE = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)*[\w-][\w.-]+\.[A-Za-z][A-Za-z0-9]{0,7}|(?:[\w.-]+/)+[\w.-]+)(?![\w/-])")


def named_paths(prompt: str) -> list[str]:
    """Workspace-relative paths the question names, in order, without duplicates."""
    seen: list[str] = []
    for match in _PATHLIKE.finditer(prompt):
        path = match.group(1).strip("./") if match.group(1).startswith("./") else match.group(1)
        path = path.rstrip(".")
        if path and path not in seen and "://" not in path:
            seen.append(path)
    return seen


async def ask_messages(world: Any, prompt: str, *, system: str, editor_context: str | None,
                       max_lines: int, attached: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The request for one question: system prompt, repo map, editor context, named files, index hits, question.

    `attached`: files already in `editor_context` (the person's @mentions), not read twice."""
    repo_map = await world.repo_map(prompt)
    hits, _ = await world.index_hits(prompt)
    files = await file_blocks(world, [p for p in named_paths(prompt) if p not in attached][:MAX_NAMED_FILES],
                              max_lines)
    parts = []
    if editor_context:
        parts.append(f"Editor context:\n{editor_context.strip()}")
    parts.extend(files)
    if hits:
        parts.append(f"Index hits for the question:\n{hits.strip()}")
    # `_fit`: what gives way first when the prompt is over the model's window (llm/fit.py).
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": REPO_MAP.format(repo_map=repo_map or "(empty)"),
         "_fit": {"priority": 10, "label": "the repo map"}},
    ]
    if parts:
        messages.append({"role": "user", "content": "\n\n".join(parts),
                         "_fit": {"priority": 20, "label": "the workspace context"}})
    messages.append({"role": "user", "content": prompt})
    return messages


def mentioned_paths(prompt: str) -> list[str]:
    """The files the person attached with `@path` (outside code), in order, without duplicates."""
    text = CODE.sub(" ", prompt)
    return list(dict.fromkeys(m.group(1).rstrip(".,;:!?)") for m in MENTION.finditer(text)))


async def file_blocks(world: Any, paths: list[str], max_lines: int, *, say_missing: bool = False) -> list[str]:
    """Each file as a fenced block headed by its path, read through the `World` (recorded, policy
    checked: a refused read is named with why); a file that does not exist is left out, or named
    when `say_missing` (the person asked for it)."""
    out = []
    for rel in paths:
        try:
            text = await world.read_file(rel)
        except PolicyViolation as exc:
            out.append(f"File: {rel} (not shown: {exc})")
            continue
        if text is None:
            if say_missing:
                out.append(f"File: {rel} (not attached: no such file in the workspace)")
            continue
        lines = text.splitlines()
        cut = f" (first {max_lines} of {len(lines)} lines)" if len(lines) > max_lines else ""
        body = "\n".join(lines[:max_lines])
        out.append(f"File: {rel}{cut}\n```\n{body}\n```")
    return out
