"""Answer a query: ranked files, the lines that matched, a fresh/stale flag.

User text goes through tantivy's lenient parser (it never raises); if the
parser reports errors (an unbalanced quote, `a.b:c` read as a field name) the
query is retried with its words only, so typing code never fails. Sub-words of
compound identifiers in the query are matched against the `parts` field with a
small boost, so `parseConfig` also finds `parse_config`. Line hits are computed
only for the files returned, from the file's bytes as they are in the workspace
now (the content is not stored in the index: fetching a hit reads only its small
stored fields), with plain byte search; only the chosen lines are decoded. Best
lines first.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec
import tantivy

from . import schema as f
from .tokenize import code_text, query_words, split_identifier

MAX_LINES_PER_FILE = 5
MAX_OCCURRENCES_PER_TERM = 24
MAX_LINE_TERMS = 12
SNIPPET_CHARS = 160


@dataclass(slots=True)
class LineHit:
    line: int  # 1-based
    text: str  # the line, trimmed to a short snippet

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {"line": self.line, "text": self.text}


@dataclass(frozen=True, slots=True)
class _LineSource:
    """Where a query's hits read their line hits from: one per query, shared by its hits."""

    root: Path
    compiled: "CompiledQuery"

    def lines_of(self, path: str) -> list[LineHit]:
        return line_hits(file_bytes(self.root, path), self.compiled.terms, self.compiled.part_terms)


class FileHit:
    """One ranked file. Its `lines` are read from the file on first access (or when
    the hit is serialised), so a caller that shows three results pays for three and
    a query itself reads no file.

    Plain slotted classes, not pydantic models: the values come from our own index
    (nothing to validate), and building ten models cost more than tantivy's search.
    `model_dump()` gives the same JSON shape the models did."""

    __slots__ = ("path", "score", "lang", "_lines", "_source")

    def __init__(
        self,
        path: str,
        score: float,
        lang: str = "text",
        lines: list[LineHit] | None = None,
        source: _LineSource | None = None,
    ) -> None:
        self.path = path
        self.score = score
        self.lang = lang
        self._lines = lines
        self._source = source

    @property
    def lines(self) -> list[LineHit]:
        if self._lines is None:
            source, self._source = self._source, None
            self._lines = source.lines_of(self.path) if source is not None else []
        return self._lines

    @property
    def lines_loaded(self) -> bool:
        """Whether `lines` has been computed (tests: a query reads no file)."""
        return self._lines is not None

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {
            "path": self.path,
            "score": self.score,
            "lang": self.lang,
            "lines": [line.model_dump(mode) for line in self.lines],
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileHit):
            return NotImplemented
        return (self.path, self.score, self.lang, self.lines) == (other.path, other.score, other.lang, other.lines)

    def __repr__(self) -> str:
        return f"FileHit(path={self.path!r}, score={self.score!r}, lang={self.lang!r})"


@dataclass(slots=True)
class QueryResult:
    query: str
    fresh: bool
    hits: list[FileHit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {
            "query": self.query,
            "fresh": self.fresh,
            "hits": [hit.model_dump(mode) for hit in self.hits],
            "warnings": list(self.warnings),
        }


@dataclass
class CompiledQuery:
    query: tantivy.Query | None
    words: list[str]  # the query's words as typed
    parts: list[str]  # sub-words of its compound words
    warnings: list[str]

    # Worked out when the first hit's lines are read, not for every query.
    @functools.cached_property
    def terms(self) -> list[str]:
        """The words line hits look for: the longest (most specific) only, so a
        paragraph-long query from the planner does not scan every file once per word."""
        return sorted(set(self.words), key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]

    @functools.cached_property
    def part_terms(self) -> list[str]:
        """Sub-words: looked for only when no line has a whole word."""
        lowered = {w.lower() for w in self.words}
        return sorted(set(self.parts) - lowered, key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]


# Field names a query may spell out (`path_text:config`) keep their `_`.
_FIELD_PREFIXES = [(code_text(name) + ":", name + ":") for name in (f.PATH_TEXT, f.SYMBOL_TABLE)]


def _parse(index: tantivy.Index, text: str, fields: list[str], boosts: dict[str, float]):
    # The code-analyzed fields hold `_` as a letter (tokenize.code_text): so must the query.
    text = code_text(text)
    for spelled, name in _FIELD_PREFIXES:
        text = text.replace(spelled, name)
    query, errors = index.parse_query_lenient(text, fields, field_boosts=boosts)
    return query, [str(e) for e in errors]


def compile_query(index: tantivy.Index, text: str) -> CompiledQuery:
    """One parse of the user's text (a second one only when the first reports an
    error); the sub-word clause is built from term queries, no parse."""
    words = query_words(text)
    if not words:
        return CompiledQuery(None, [], [], [])
    main, errors = _plain_words_query(index.schema, text), []
    if main is None:
        main, errors = _parse(index, text, _FIELDS, f.FIELD_BOOSTS)
    warnings: list[str] = []
    if errors:
        warnings.append(f"query syntax not understood ({errors[0]}); searched for its words instead")
        main, _ = _parse(index, " ".join(w.lower() for w in words), _FIELDS, f.FIELD_BOOSTS)
    split = [parts for parts in map(_telling_parts, words) if len(parts) > 1]
    sub_words = _parts_query(index, split)
    if sub_words is not None:
        main = tantivy.Query.boolean_query([(tantivy.Occur.Should, main), (tantivy.Occur.Should, sub_words)])
    return CompiledQuery(main, words, list(dict.fromkeys(itertools.chain.from_iterable(split))), warnings)


_FIELDS = list(f.FIELD_BOOSTS)
# Text that is only ASCII identifiers between spaces needs no parser.
_PLAIN_WORDS = re.compile(r"[A-Za-z0-9_\s]*")
_OPERATORS = frozenset({"AND", "OR", "NOT", "TO", "IN"})


def _plain_words_query(schema: tantivy.Schema, text: str) -> tantivy.Query | None:
    """What the parser makes of ASCII identifiers between spaces (each word, over
    every field at its boost, any word may match), built without parsing: half
    the parser's cost, same query and scores. None for any other text."""
    if not _PLAIN_WORDS.fullmatch(text):
        return None
    words = dict.fromkeys(text.split())  # the parser, too, drops a word typed twice (`Foo foo` stays two)
    if not words or not _OPERATORS.isdisjoint(words):
        return None
    tokens = [code_text(word).lower() for word in words]
    if any(len(token.encode()) >= _MAX_TOKEN_BYTES for token in tokens):
        return None  # the analyzer drops it: leave that to the parser
    term, boost, should = tantivy.Query.term_query, tantivy.Query.boost_query, tantivy.Occur.Should
    per_word = []
    for token in tokens:
        per_field = []
        for name, weight in f.FIELD_BOOSTS.items():
            query = term(schema, name, token, index_option="freq")
            per_field.append((should, query if weight == 1.0 else boost(query, weight)))
        per_word.append(tantivy.Query.boolean_query(per_field))
    return per_word[0] if len(per_word) == 1 else tantivy.Query.boolean_query([(should, q) for q in per_word])
# The code analyzer drops tokens of this many bytes or more (schema.code_analyzer).
_MAX_TOKEN_BYTES = 128


def _telling_parts(word: str) -> list[str]:
    """The sub-words of a compound query word that say something: two letters or
    more, not only digits (`x0e7` has none; `copy2` one, so no sub-word clause)."""
    return [p for p in dict.fromkeys(split_identifier(word)) if len(p) > 1 and not p.isdigit()]


def _parts_query(index: tantivy.Index, split: list[list[str]]) -> tantivy.Query | None:
    """Files holding every sub-word of a compound query word (`parseConfig`: `parse`
    and `config`) in the `parts` field, at its boost. Every sub-word, not any: a
    file is not a match for `getUserName` because it says `get` somewhere, and
    intersecting postings costs a fraction of uniting those of `get` or `test`
    (the union was two thirds of tantivy's search time). Sub-words are already
    the analyzer's tokens (lowercased letter or digit runs): term queries, no parse."""
    schema = index.schema
    per_word = []
    for parts in split:
        musts = [
            (tantivy.Occur.Must, tantivy.Query.term_query(schema, f.PARTS, part, index_option="freq"))
            for part in parts
            if len(part.encode()) < _MAX_TOKEN_BYTES
        ]
        if musts:
            per_word.append((tantivy.Occur.Should, tantivy.Query.boolean_query(musts)))
    if not per_word:
        return None
    query = per_word[0][1] if len(per_word) == 1 else tantivy.Query.boolean_query(per_word)
    return tantivy.Query.boost_query(query, f.PARTS_BOOST)


def with_filters(
    schema: tantivy.Schema, query: tantivy.Query, *, paths: list[str] | None, lang: str | None
) -> tantivy.Query:
    clauses = [(tantivy.Occur.Must, query)]
    if paths is not None:
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_set_query(schema, f.PATH, paths)))
    if lang is not None:
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, f.LANG, lang)))
    return tantivy.Query.boolean_query(clauses) if len(clauses) > 1 else query


def _snippet(line: str) -> str:
    line = line.strip()
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"


def _occurrences(haystack: bytes, terms: list[str], *, lowered: bool = False, limit: int) -> dict[int, set[bytes]]:
    """Line start offset -> the terms seen on that line (at most `MAX_OCCURRENCES_PER_TERM`
    lines a term; `limit` when there is one term: every line then weighs the same and
    the first `limit` win). `bytes.find` per term, skipping to the next line after a
    hit: a memchr-speed scan that stops early. `lowered`: the haystack is lowercased
    (ASCII letters only), so are the terms."""
    per_line: dict[int, set[bytes]] = {}
    needles = dict.fromkeys((t.lower() if lowered else t).encode() for t in terms)
    cap = limit if len(needles) == 1 else MAX_OCCURRENCES_PER_TERM
    for term in needles:
        pos, seen = haystack.find(term), 0
        while pos != -1 and seen < cap:
            per_line.setdefault(haystack.rfind(b"\n", 0, pos) + 1, set()).add(term)
            seen += 1
            end = haystack.find(b"\n", pos)
            pos = -1 if end == -1 else haystack.find(term, end)
    return per_line


def line_hits(
    content: str | bytes, terms: list[str], part_terms: list[str] | None = None, limit: int = MAX_LINES_PER_FILE
) -> list[LineHit]:
    """The best `limit` lines for the query (more and longer terms first), in line order.

    Terms are looked up as typed first (no copy of the file); only when none occurs
    as typed is the file lowercased, once, for a case-insensitive pass, and then for
    the sub-words of compound query words. Only the chosen lines are decoded.
    """
    data = content.encode() if isinstance(content, str) else content
    per_line = _occurrences(data, terms, limit=limit)
    if not per_line and (terms or part_terms):
        lowered = data.lower()
        per_line = _occurrences(lowered, terms, lowered=True, limit=limit) or _occurrences(
            lowered, part_terms or [], lowered=True, limit=limit
        )
    best = sorted(per_line.items(), key=lambda kv: (-sum(len(t) for t in kv[1]), kv[0]))[:limit]
    out, line, counted_to = [], 1, 0
    for start, _ in sorted(best):
        line += data.count(b"\n", counted_to, start)
        counted_to = start
        end = data.find(b"\n", start)
        text = data[start : end if end != -1 else len(data)].decode("utf-8", "replace")
        out.append(LineHit(line, _snippet(text)))
    return out


def file_bytes(root: Path, path: str) -> bytes:
    """The workspace file's bytes for line hits (b"" when it is gone or unreadable)."""
    try:
        fd = os.open(os.path.join(root, path), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        with os.fdopen(fd, "rb", closefd=True) as fh:
            return fh.read()
    except OSError:
        return b""


def run(
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    compiled: CompiledQuery,
    *,
    top_k: int,
    paths: list[str] | None,
    lang: str | None,
    root: Path | None = None,
) -> list[FileHit]:
    """The top `top_k` files; with `root`, each with its line hits (read from the file
    when first asked for). Only the returned files' stored fields are fetched (and
    those tied with the last one, to break the tie by path)."""
    if compiled.query is None or top_k <= 0 or (paths is not None and not paths):
        return []
    query = compiled.query if paths is None and lang is None else with_filters(
        index.schema, compiled.query, paths=paths, lang=lang
    )
    # Ties at the cut are broken by path, not by segment order, so results do not
    # depend on how tantivy merged segments: one more hit than needed shows whether
    # there is a tie; only then is the search repeated for all of the tied.
    limit = top_k + 1
    while True:
        hits = searcher.search(query, limit=limit, count=False).hits
        cut = min(top_k, len(hits))
        if cut < len(hits):
            last = round(hits[cut - 1][0], 5)
            while cut < len(hits) and round(hits[cut][0], 5) == last:
                cut += 1
        if cut < len(hits) or len(hits) < limit:
            break
        limit *= 4
    scored = []
    for score, address in hits[:cut]:
        doc = searcher.doc(address)
        scored.append((round(score, 5), doc.get_first(f.PATH), doc))
    if cut > 1:  # by path, then (stable) by score, best first: equal scores stay in path order
        scored.sort(key=_PATH_OF)
        scored.sort(key=_SCORE_OF, reverse=True)
    source = None if root is None else _LineSource(root, compiled)
    return [FileHit(path, score, doc.get_first(f.LANG) or "text", None, source) for score, path, doc in scored[:top_k]]


_SCORE_OF, _PATH_OF = operator.itemgetter(0), operator.itemgetter(1)


def symbol_table(doc: tantivy.Document) -> list[list[Any]]:
    raw = doc.get_first(f.SYMBOL_TABLE)
    return json.loads(bytes(raw)) if raw else []


def glob_filter(patterns: str, paths: list[str]) -> list[str]:
    """Paths matching a gitignore-style glob (`*.py`, `src/**/test_*.py`, `docs/`)."""
    spec = pathspec.GitIgnoreSpec.from_lines([p for p in re.split(r"[,\s]+", patterns) if p])
    return [p for p in paths if spec.match_file(p)]
