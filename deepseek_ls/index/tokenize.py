"""Code-aware tokenisation.

The `content` field is tokenised inside tantivy by its built-in tokenizer
(runs of letters and digits, lowercased). `code_text` writes every `_` as a
letter (U+02CD, "ˍ") first, in documents and in queries alike, so whole
identifiers such as `parse_config` or `HTTPServer` stay one token: nearly the
same notion of "word" as ripgrep's `-w` (Unicode `\\w`; they differ only on
rare characters: combining marks, connector punctuation other than `_`,
numerals such as `²`). tantivy cannot split
`parseConfig` into `parse` + `config` (its regex engine has no look-around), so
the sub-words are computed here in Python and indexed in a second field,
`parts`. Only the distinct identifiers of a file are split, which keeps the
cost proportional to the vocabulary, not to the file size; finding them is a
byte-table translation and a split (C loops), not a regex over the file.
"""

from __future__ import annotations

import itertools
import re

# A run of word characters (Python's `\w` is Unicode-aware, like Rust's).
_WORD = re.compile(r"\w+")
# Sub-words: `HTTPServer` → HTTP, Server; `parse_config2` → parse, config, 2.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
# Every ASCII byte that is not a word character becomes a space; bytes >= 0x80
# (UTF-8 sequences) stay, and tokens holding them are re-read with `_WORD`.
_ASCII_NON_WORD_TO_SPACE = bytes(
    b if b >= 0x80 or chr(b).isalnum() or b == ord("_") else ord(" ") for b in range(256)
)


# `_` as a letter, for tantivy's tokenizer (see the module docstring); a modifier
# letter found in no code we know of, and one that lowercasing leaves alone.
UNDERSCORE_AS_LETTER = "\u02cd"


def code_text(text: str) -> str:
    """Text for the code-analyzed fields (documents and query strings)."""
    return text.replace("_", UNDERSCORE_AS_LETTER)


def split_identifier(word: str) -> list[str]:
    """Lowercased sub-words of one identifier; empty when it has only one part."""
    parts = [p.lower() for p in _PART.findall(word)]
    return parts if len(parts) > 1 else []


def _is_compound(ident: str) -> bool:
    core = ident.strip("_")
    # Only compound identifiers can split: an inner `_`, or mixed case.
    return "_" in core or not (core.islower() or core.isupper())


def _token_parts(token: bytes) -> tuple[str, ...]:
    words = [token.decode()] if token.isascii() else _WORD.findall(token.decode("utf-8", "replace"))
    return tuple(part for word in words if _is_compound(word) for part in split_identifier(word))


class _PartsCache(dict):
    """token -> its sub-words (empty for a plain word). Identifiers repeat across the
    files of a build, so most lookups hit; on a miss the token is split here."""

    def __missing__(self, token: bytes) -> tuple[str, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        found = self[token] = _token_parts(token)
        return found


_CACHE_LIMIT = 1 << 19
_parts_cache = _PartsCache()


def identifier_parts(content: str | bytes) -> str:
    """The `parts` field for a file: the sub-words of its compound identifiers.

    Each distinct sub-word appears once; the field is for recall ("config"
    finds `parseConfig`), ranking comes from `content`.
    """
    data = content if isinstance(content, bytes) else content.encode("utf-8", "replace")
    tokens = set(data.translate(_ASCII_NON_WORD_TO_SPACE).split())
    return " ".join(sorted(set(itertools.chain.from_iterable(map(_parts_cache.__getitem__, tokens)))))


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
