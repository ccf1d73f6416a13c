"""Code-aware tokenisation.

The code-analyzed fields (`content`, `path_text`, `symbols`) are tokenised
inside tantivy by its built-in tokenizer (runs of letters and digits,
lowercased). `index_text` deletes every `_` first, in documents and in queries
alike, so each identifier is one term, in the same normal form however it is
written: `parse_config`, `parseConfig`, `PARSE_CONFIG`, `_parse_config` ->
`parseconfig`. A compound query word is then one term lookup that finds every
spelling, and a plain word matches whole identifiers only (`config` does not
find `parse_config`, as with `rg -w`). Deleting `_` is a C-level pass that keeps
ASCII text ASCII, so tantivy reads it at its fastest; no word of the file is
looked at in Python (schema 5 split every file into its distinct words to make
these forms, which cost more than raw tantivy's whole build). What it gives up:
two spellings of one identifier score the same, and two identifiers that differ
only by `_` (`a_b`, `ab`) are one term.
"""

from __future__ import annotations

import re
from typing import Callable

from . import native

# A run of word characters (Python's `\w` is Unicode-aware, like Rust's).
_WORD = re.compile(r"\w+")
# Sub-words: `HTTPServer` → HTTP, Server; `parse_config2` → parse, config, 2.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")


def _index_text_reference(text: str) -> str:
    return text.replace("_", "")


# Text for the code-analyzed fields (documents and query strings): every `_` deleted, so an
# identifier is one term in its normal form. `_native.index_text` where it was built: one
# pass instead of `str.replace`'s count and copy.
index_text: Callable[[str], str] = native.module.index_text if native.module else _index_text_reference


def split_identifier(word: str) -> list[str]:
    """Lowercased sub-words of one identifier; empty when it has only one part."""
    parts = [p.lower() for p in _PART.findall(word)]
    return parts if len(parts) > 1 else []


def sub_words(text: str) -> str:
    """The sub-words of every identifier in `text`, space-separated (one regex call)."""
    return " ".join(_PART.findall(text))


def query_words(query: str) -> list[str]:
    """The words of a user query, in order, without duplicates."""
    out: list[str] = []
    for word in _WORD.findall(query):
        if word not in out:
            out.append(word)
    return out
