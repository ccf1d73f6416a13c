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
                       max_lines: int) -> list[dict[str, Any]]:
    """The request for one question: system prompt, repo map, editor context, named files, index hits, question."""
    repo_map = await world.repo_map(prompt)
    hits, _ = await world.index_hits(prompt)
    files = await _named_files(world, prompt, max_lines)
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


async def _named_files(world: Any, prompt: str, max_lines: int) -> list[str]:
    out = []
    for rel in named_paths(prompt)[:MAX_NAMED_FILES]:
        try:
            text = await world.read_file(rel)
        except PolicyViolation as exc:
            out.append(f"File: {rel} (not shown: {exc})")
            continue
        if text is None:
            continue
        lines = text.splitlines()
        cut = f" (first {max_lines} of {len(lines)} lines)" if len(lines) > max_lines else ""
        body = "\n".join(lines[:max_lines])
        out.append(f"File: {rel}{cut}\n```\n{body}\n```")
    return out
