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
`parts`. A file's distinct words are found by a byte-table translation and a
split (C loops, not a regex over the file: Python's `re` costs more per byte than
the split); a vocabulary shared by the files of a build sorts each word out once
(plain or compound, and its sub-words), so per file only set arithmetic in C
remains. Splitting identifiers inside tantivy would be cheaper still, but
tantivy-py cannot register a tokenizer written in Python and its regex engine
has no look-around (`HTTPServer` → HTTP, Server).
"""

from __future__ import annotations

import itertools
import re

# A run of word characters (Python's `\w` is Unicode-aware, like Rust's).
_WORD = re.compile(r"\w+")
# Sub-words: `HTTPServer` → HTTP, Server; `parse_config2` → parse, config, 2.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
_PART_OR_NEWLINE = re.compile(_PART.pattern + r"|\n")  # no sub-word crosses a newline
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


def words_of(data: bytes) -> set[bytes]:
    """The distinct words of a file's bytes: maximal runs of ASCII `[A-Za-z0-9_]` and
    bytes >= 0x80 (a byte-table translation and a split: C loops, no regex)."""
    return set(data.translate(_ASCII_NON_WORD_TO_SPACE).split())


class _Vocabulary:
    """Every word seen so far, and the sub-words of the compound ones. Identifiers
    repeat across the files of a build, so per file only the words never seen before
    are looked at in Python; the rest is set arithmetic in C."""

    LIMIT = 1 << 19

    def __init__(self) -> None:
        self.known: set[bytes] = set()
        self.compound: set[bytes] = set()
        self.parts: dict[bytes, tuple[str, ...]] = {}

    def learn(self, fresh: set[bytes]) -> None:
        # Plain ASCII words (all lower or all upper case, no `_`) cannot split: sorted
        # out by C-level filters.
        alnum = set(filter(bytes.isalnum, fresh))
        plain = set(filter(bytes.islower, alnum))
        plain.update(filter(bytes.isupper, alnum))
        others = fresh - plain
        ascii_words = [word for word in others if word.isascii()]
        texts = b"\n".join(ascii_words).decode().split("\n") if ascii_words else []
        compound = [(word, text) for word, text in zip(ascii_words, texts) if _is_compound(text)]
        if compound:
            # One regex call for all of them (a call per word cost more than the
            # matching): the sub-words of word n are the n-th line of the result.
            lines = " ".join(_PART_OR_NEWLINE.findall("\n".join(text for _, text in compound))).lower().split("\n")
            for (word, _), line in zip(compound, lines):
                parts = line.split()
                if len(parts) > 1:
                    self.parts[word] = tuple(parts)
                    self.compound.add(word)
        for word in others:
            if not word.isascii() and (parts := _token_parts(word)):
                self.parts[word] = parts
                self.compound.add(word)
        self.known |= fresh


_vocabulary = _Vocabulary()


def identifier_parts(content: str | bytes, words: set[bytes] | None = None) -> str:
    """The `parts` field for a file: the sub-words of its compound identifiers.

    Each distinct sub-word appears once; the field is for recall ("config"
    finds `parseConfig`), ranking comes from `content`. `words`: `words_of(content)`
    when the caller already has it.
    """
    global _vocabulary
    if words is None:
        data = content if isinstance(content, bytes) else content.encode("utf-8", "replace")
        words = words_of(data)
    vocab = _vocabulary  # one consistent vocabulary for this call, even if another thread replaces it
    fresh = words - vocab.known
    if fresh:
        if len(vocab.known) + len(fresh) > _Vocabulary.LIMIT:
            vocab = _vocabulary = _Vocabulary()
        vocab.learn(fresh)
    compound = words & vocab.compound
    return " ".join(sorted(set(itertools.chain.from_iterable(map(vocab.parts.__getitem__, compound)))))


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
