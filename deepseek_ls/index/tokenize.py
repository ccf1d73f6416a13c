"""Code-aware tokenisation.

The `content` field is tokenised inside tantivy by its built-in tokenizer
(runs of letters and digits, lowercased). `code_text` writes every `_` as a
letter (U+02CD, "ˍ") first, in documents and in queries alike, so whole
identifiers such as `parse_config` or `HTTPServer` stay one token: nearly the
same notion of "word" as ripgrep's `-w` (Unicode `\\w`; they differ only on
rare characters: combining marks, connector punctuation other than `_`,
numerals such as `²`). tantivy cannot split
`parseConfig` into `parse` + `config` (its regex engine has no look-around), so
compound identifiers are normalised here in Python (their sub-words joined,
lowercased: `parse_config`, `parseConfig`, `PARSE_CONFIG` -> `parseconfig`) and
indexed in a second field, `idents`: a compound query word is then one term
there. A file's distinct words are found by a byte-table translation and a
split (C loops, not a regex over the file: Python's `re` costs more per byte than
the split); a vocabulary shared by the files of a build sorts each word out once
(plain or compound, and its normal form), so per file only set arithmetic in C
remains. Splitting identifiers inside tantivy would be cheaper still, but
tantivy-py cannot register a tokenizer written in Python and its regex engine
has no look-around (`HTTPServer` → HTTP, Server).
"""

from __future__ import annotations

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


def normalised(word: str) -> str | None:
    """The `idents` term of one identifier: its sub-words joined, lowercased
    (`parse_config`, `parseConfig`, `PARSE_CONFIG` -> `parseconfig`); None when it
    is not compound (one sub-word, or all one case without an inner `_`)."""
    if word.isascii():
        return word.replace("_", "").lower() if _ascii_compound(word) else None
    if not _is_compound(word):
        return None
    parts = split_identifier(word)
    return "".join(parts) if parts else None


def _ascii_compound(word: str) -> bool:
    """Whether an ASCII identifier has more than one sub-word (`split_identifier`),
    without the regex: its sub-words are all its characters but `_`, and it has one
    only when it has no inner `_` and is all one case, all digits or a capitalised
    word (`Parser`)."""
    core = word.strip("_")
    if "_" in core:
        return True
    if not core or core.islower() or core.isupper() or core.isdigit():
        return False
    rest = core[1:]
    return not (core[0].isupper() and rest.isalpha() and rest.islower())


def _token_normalised(token: bytes) -> str:
    """The normal forms of a non-ASCII token's compound words, space-separated ("" if none)."""
    words = _WORD.findall(token.decode("utf-8", "replace"))
    return " ".join(dict.fromkeys(n for n in map(normalised, words) if n))


def words_of(data: bytes) -> set[bytes]:
    """The distinct words of a file's bytes: maximal runs of ASCII `[A-Za-z0-9_]` and
    bytes >= 0x80 (a byte-table translation and a split: C loops, no regex)."""
    return set(data.translate(_ASCII_NON_WORD_TO_SPACE).split())


class _Vocabulary:
    """Every word seen so far, and the normal form of the compound ones. Identifiers
    repeat across the files of a build, so per file only the words never seen before
    are looked at in Python; the rest is set arithmetic in C."""

    LIMIT = 1 << 19

    def __init__(self) -> None:
        self.known: set[bytes] = set()
        self.compound: set[bytes] = set()
        self.normal: dict[bytes, str] = {}

    def learn(self, fresh: set[bytes]) -> None:
        # Plain ASCII words (all lower or all upper case, no `_`) cannot split: sorted
        # out by C-level filters.
        alnum = set(filter(bytes.isalnum, fresh))
        plain = set(filter(bytes.islower, alnum))
        plain.update(filter(bytes.isupper, alnum))
        others = fresh - plain
        ascii_words = [word for word in others if word.isascii()]
        if ascii_words:
            # An ASCII word's normal form is itself without `_`, lowercased (`normalised`):
            # made for all of them at once; only the is-it-compound test is per word.
            joined = b"\n".join(ascii_words)
            texts = joined.decode().split("\n")
            forms = joined.replace(b"_", b"").lower().decode().split("\n")
            for word, text, form in zip(ascii_words, texts, forms):
                if _ascii_compound(text):
                    self.normal[word] = form
                    self.compound.add(word)
        for word in others:
            if not word.isascii() and (forms := _token_normalised(word)):
                self.normal[word] = forms
                self.compound.add(word)
        self.known |= fresh


_vocabulary = _Vocabulary()


def normalised_identifiers(content: str | bytes, words: set[bytes] | None = None) -> str:
    """The `idents` field for a file: the normal form of each of its compound
    identifiers, once each (`parse_config` and `parseConfig` -> `parseconfig`).

    A compound query word is one term in this field, so `parseConfig` finds
    `parse_config` (and not a file that merely says `parse` and `config` in two
    places). `words`: `words_of(content)` when the caller already has it.
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
    return " ".join(sorted(set(map(vocab.normal.__getitem__, words & vocab.compound))))


def query_words(query: str) -> list[str]:
    """The words of a user query, in order, without duplicates."""
    out: list[str] = []
    for word in _WORD.findall(query):
        if word not in out:
            out.append(word)
    return out
