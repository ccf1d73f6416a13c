"""YAML frontmatter of a Markdown file (a custom command, a `SKILL.md`): `---` lines around YAML.

Parsed with PyYAML's safe loader (no tags that build objects). A file without frontmatter is all
body. Lines YAML refuses but that are plain `key: value` (Claude Code's `argument-hint: [a] [b]`)
are read as text; frontmatter that is neither a YAML mapping nor such lines is a `FrontmatterError` naming the file and what is
wrong, so the caller can report it and go on with the other files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 256 * 1024  # a command or a skill larger than this is refused (a prompt, not a data file)


class FrontmatterError(ValueError):
    """A file whose frontmatter cannot be read; the message names the file."""


def read(path: Path) -> tuple[dict[str, Any], str]:
    """`(frontmatter, body)` of the Markdown file at `path`."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FrontmatterError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if len(data) > MAX_BYTES:
        raise FrontmatterError(f"{path}: larger than {MAX_BYTES // 1024} KiB, left out")
    return split(data.decode("utf-8", "replace"), path)


def split(text: str, path: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """`(frontmatter, body)` of Markdown `text`; `path` only names it in errors."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise FrontmatterError(f"{path}: the frontmatter opened by '---' on line 1 is never closed")
    try:
        meta = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        # Claude Code's own commands write `argument-hint: [tag] [audience]`, which YAML refuses:
        # plain `key: value` lines are read as text, as Claude Code reads them.
        plain = _plain_lines(lines[1:end])
        if plain is not None:
            return plain, "".join(lines[end + 1:])
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(f"{path}: its frontmatter is not valid YAML{line}: {problem}") from exc
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontmatterError(f"{path}: its frontmatter is a {type(meta).__name__}, not 'key: value' lines")
    return {str(k): v for k, v in meta.items()}, "".join(lines[end + 1:])


def _plain_lines(lines: list[str]) -> dict[str, Any] | None:
    """`key: value` lines as a mapping of text, or None when a line is not of that shape."""
    out: dict[str, Any] = {}
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z][\w\-]*", key.strip()) or line[:1].isspace():
            return None
        out[key.strip()] = value.strip()
    return out


def text_field(meta: dict[str, Any], key: str, path: Path | str) -> str | None:
    """`meta[key]` as a string (None when absent); a list or a mapping there is an error."""
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise FrontmatterError(f"{path}: '{key}' must be text, not a {type(value).__name__}")
    return str(value).strip()
