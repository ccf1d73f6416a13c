"""Code-aware tokenisation.

The `content` field is tokenised inside tantivy by a regex analyzer (`\\w+`,
lowercased): whole identifiers such as `parse_config` or `HTTPServer` stay one
token, with the same notion of "word" as ripgrep's `-w` (both use Rust's
Unicode `\\w`), which is what the recall test relies on. tantivy cannot split
`parseConfig` into `parse` + `config` (its regex engine has no look-around),
so the sub-words are computed here in Python and indexed in a second field,
`parts`. Only the distinct identifiers of a file are split, which keeps the
cost proportional to the vocabulary, not to the file size.
"""

from __future__ import annotations

import re

# A run of word characters (Python's `\w` is Unicode-aware, like Rust's).
_WORD = re.compile(r"\w+")
# Sub-words: `HTTPServer` → HTTP, Server; `parse_config2` → parse, config, 2.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")


def split_identifier(word: str) -> list[str]:
    """Lowercased sub-words of one identifier; empty when it has only one part."""
    parts = [p.lower() for p in _PART.findall(word)]
    return parts if len(parts) > 1 else []


def identifier_parts(text: str) -> str:
    """The `parts` field for a file: the sub-words of its compound identifiers.

    Each distinct sub-word appears once; the field is for recall ("config"
    finds `parseConfig`), ranking comes from `content`.
    """
    seen: set[str] = set()
    for ident in set(_WORD.findall(text)):
        core = ident.strip("_")
        # Only compound identifiers can split: an inner `_`, or mixed case.
        if "_" in core or not (core.islower() or core.isupper()):
            seen.update(split_identifier(ident))
    return " ".join(sorted(seen))


def query_words(query: str) -> list[str]:
    """The words of a user query, in order, without duplicates."""
    out: list[str] = []
    for word in _WORD.findall(query):
        if word not in out:
            out.append(word)
    return out


def query_parts(query: str) -> list[str]:
    """Sub-words of the query's compound identifiers, for the `parts` field."""
    out: list[str] = []
    for word in query_words(query):
        for part in split_identifier(word):
            if part not in out:
                out.append(part)
    return out
