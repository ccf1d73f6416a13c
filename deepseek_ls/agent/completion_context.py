"""What an inline completion is asked with: windows of the buffer around the cursor and a few
snippets of related code, within a token budget, and whether a file may be sent at all.

The budget is counted with the conservative estimate (`llm.tokens.CHARS_PER_TOKEN`): exact
tokenizing on every keystroke would cost more than the whole rest of a request.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepseek_ls.index.comment_syntax import SYNTAX
from deepseek_ls.index.languages import language_for
from deepseek_ls.llm.tokens import CHARS_PER_TOKEN

SNIPPET_CHARS = 300  # one related snippet, at most
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_NEAR_LINES = 4  # lines before the cursor whose identifiers look for related code
_COMMON = frozenset(
    "and are args async await break case catch class const continue def default elif else enum except export "
    "extends false final finally for from func function if impl import in interface is lambda let match mut "
    "new none not null pass pub raise return self static struct super switch this throw true try type use "
    "var void while with yield print len str int list dict".split())


@dataclass(frozen=True)
class Window:
    """The text sent around the cursor: `prefix` ends at the cursor, `suffix` starts there."""

    prefix: str
    suffix: str
    snippets: tuple[tuple[str, str], ...] = ()
    comment: str = "#"


def comment_marker(path: str) -> str:
    """The line-comment marker of `path`'s language (snippets are sent as comments); `//` where it
    has none or we cannot place it."""
    syntax = SYNTAX.get(language_for(path))
    return syntax.line[0] if syntax is not None and syntax.line else "//"


def cut_window(text: str, offset: int, budget_chars: int) -> tuple[str, str]:
    """The prefix and suffix around `offset` within `budget_chars` together: a quarter for the
    suffix, the rest (and what the suffix leaves unused) for the prefix, cut at line boundaries."""
    before, after = text[:offset], text[offset:]
    suffix_room = budget_chars // 4
    suffix = after if len(after) <= suffix_room else _cut_tail(after[:suffix_room])
    prefix_room = budget_chars - len(suffix)
    prefix = before if len(before) <= prefix_room else _cut_head(before[-prefix_room:])
    return prefix, suffix


def _cut_head(text: str) -> str:
    """`text` without its first, partial line (a window starts at a line start)."""
    newline = text.find("\n")
    return text[newline + 1 :] if 0 <= newline < len(text) - 1 else text


def _cut_tail(text: str) -> str:
    newline = text.rfind("\n")
    return text[: newline + 1] if newline > 0 else text


def identifiers_near(prefix: str, limit: int = 6) -> list[str]:
    """The last distinct, uncommon identifiers of the lines before the cursor, nearest first."""
    lines = prefix.splitlines()[-_NEAR_LINES:]
    found: list[str] = []
    for word in reversed(_IDENTIFIER.findall("\n".join(lines))):
        if word.lower() not in _COMMON and word not in found:
            found.append(word)
            if len(found) == limit:
                break
    return found


def window(text: str, offset: int, path: str, *, context_tokens: int,
           snippets: tuple[tuple[str, str], ...] = ()) -> Window:
    """The whole context of one request: snippets first (up to a quarter of the budget), the
    buffer's windows in the rest."""
    budget = int(context_tokens * CHARS_PER_TOKEN)
    kept: list[tuple[str, str]] = []
    room = budget // 4
    for hit_path, hit_text in snippets:
        cost = len(hit_path) + len(hit_text) + 8
        if cost > room:
            break
        kept.append((hit_path, hit_text))
        room -= cost
    used = sum(len(p) + len(t) + 8 for p, t in kept)
    prefix, suffix = cut_window(text, offset, budget - used)
    return Window(prefix, suffix, tuple(kept), comment_marker(path))


def hidden_reason(policy: Any, rel: str | None, text: str) -> str | None:
    """Why this buffer must never be sent to the model (outside the workspace, a location the
    `PathPolicy` refuses such as `.env`, a credential file by its content), or None when it may be."""
    return path_reason(policy, rel) or content_reason(text)


def path_reason(policy: Any, rel: str | None) -> str | None:
    """`hidden_reason` for the buffer's location alone (resolving it walks the file system)."""
    if rel is None:
        return "it is outside the workspace"
    if not policy.is_allowed(rel):
        return "it is a secret location (policy.deny_paths) or reserved"
    return None


def content_reason(text: str) -> str | None:
    """`hidden_reason` for the buffer's content alone (its head, as `secret_files.secret_kind` reads it)."""
    from deepseek_ls.policy.secret_files import secret_kind

    if (kind := secret_kind(text)) is not None:
        return f"its content looks like {kind}"
    return None


def index_snippets(index: Any, root: Path, deny_paths: list[str]) -> Callable[[str, int], list]:
    """A search for related code in `index` (a built `CodeIndex`): `(query, top_k) -> [(path, text)]`,
    never a hit in a file the policy hides from the model. (The caller drops the current file's.)"""
    from deepseek_ls.policy import PathPolicy
    from deepseek_ls.policy.secret_files import file_is_secret

    policy = PathPolicy(root, deny_paths)

    def search(query: str, top_k: int) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for hit in index.query(query, top_k=top_k).hits:
            if not policy.is_allowed(hit.path) or file_is_secret(root, hit.path):
                continue
            text = "\n".join(line.text.rstrip() for line in hit.lines[:3])[:SNIPPET_CHARS]
            if text.strip():
                out.append((hit.path, text))
        return out

    return search
