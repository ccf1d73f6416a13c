"""Answer a query: ranked files, the lines that matched, a fresh/stale flag.

User text goes through tantivy's lenient parser (it never raises); if the
parser reports errors (an unbalanced quote, `a.b:c` read as a field name) the
query is retried with its words only, so typing code never fails. Words are
looked up normalised (`tokenize.index_text`: `_` deleted, lowercased), as the
index holds them, so `parseConfig` also finds `parse_config`. Line hits are computed
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
from typing import Any, Iterable

import tantivy

from deepseek_ls.globs import gitignore_spec
from deepseek_ls.policy import safe_files
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.secret_files import secret_kind_of_bytes

from . import schema as f
from .languages import language_for
from .tokenize import index_text, query_words, split_identifier

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
    warnings: list[str]

    # Worked out when the first hit's lines are read, not for every query.
    @functools.cached_property
    def parts(self) -> list[str]:
        """The telling sub-words of the query's compound words (for line hits only)."""
        return list(dict.fromkeys(itertools.chain.from_iterable(map(_telling_parts, self.words))))

    @functools.cached_property
    def terms(self) -> list[str]:
        """The words line hits look for: the longest (most specific) only, so a
        paragraph-long query from the planner does not scan every file once per word."""
        return sorted(set(self.words), key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]

    @functools.cached_property
    def part_terms(self) -> list[str]:
        """Sub-words: looked for only when no line has a whole word (the identifier
        written another way: `parseConfig` typed, `parse_config` written)."""
        lowered = {w.lower() for w in self.words}
        return sorted(set(self.parts) - lowered, key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]


# Field names a query may spell out (`path_text:config`) keep their `_`.
_FIELD_PREFIXES = [(index_text(name) + ":", name + ":") for name in (f.PATH_TEXT, f.SYMBOL_TABLE)]
_FIELDS = list(f.FIELD_BOOSTS)
_WEIGHTED_FIELDS = list(f.FIELD_BOOSTS.items())
_TERM, _BOOST, _BOOLEAN = tantivy.Query.term_query, tantivy.Query.boost_query, tantivy.Query.boolean_query
_SHOULD = tantivy.Occur.Should
# Text that is only ASCII identifiers between spaces needs no parser.
_PLAIN_WORDS = re.compile(r"[A-Za-z0-9_\s]*")
_OPERATORS = frozenset({"AND", "OR", "NOT", "TO", "IN"})
# The analyzers drop tokens of this many bytes or more (schema.code_analyzer).
_MAX_TOKEN_BYTES = 128


# A quoted phrase (with an optional `~slop`).
_PHRASE = re.compile(r'"([^"]*)"(?:~\d+)?')


def _phrase_as_words(match: re.Match[str]) -> str:
    words = query_words(match.group(1))
    return "(" + " ".join("+" + word for word in words) + ")" if words else " "


def _parse(index: tantivy.Index, text: str, fields: list[str], boosts: dict[str, float]):
    # The code-analyzed fields hold identifiers without `_` (tokenize.index_text): so must the query.
    text = index_text(text)
    # `content` keeps no positions: a quoted phrase finds the files holding all its words.
    text = _PHRASE.sub(_phrase_as_words, text)
    for spelled, name in _FIELD_PREFIXES:
        text = text.replace(spelled, name)
    query, errors = index.parse_query_lenient(text, fields, field_boosts=boosts)
    return query, [str(e) for e in errors]


def compile_query(index: tantivy.Index, text: str, schema: tantivy.Schema | None = None) -> CompiledQuery:
    """The query for `text`: term queries built directly for plain words (no parse),
    the lenient parser for anything else (a second parse only when the first
    reports an error). One flat Boolean of Should clauses where it can be (nesting
    costs tantivy a scorer per level).
    `schema`: the index's, when the caller holds it (`index.schema` makes a new object)."""
    if schema is None:
        schema = index.schema
    plain = _PLAIN_WORDS.fullmatch(text) is not None
    words = list(dict.fromkeys(text.split())) if plain else query_words(text)
    if not words:
        return CompiledQuery(None, [], [])
    clauses = _plain_words_clauses(schema, words) if plain else None
    warnings: list[str] = []
    if clauses is None:
        main, errors = _parse(index, text, _FIELDS, f.FIELD_BOOSTS)
        if errors:
            warnings.append(f"query syntax not understood ({errors[0]}); searched for its words instead")
            main, _ = _parse(index, " ".join(w.lower() for w in words), _FIELDS, f.FIELD_BOOSTS)
        clauses = [(_SHOULD, main)]
    query = clauses[0][1] if len(clauses) == 1 else _BOOLEAN(clauses)
    return CompiledQuery(query, words, warnings)


def _plain_words_clauses(schema: tantivy.Schema, words: list[str]) -> list | None:
    """What the parser makes of ASCII identifiers between spaces (each word, over
    every field at its boost, any word may match), built without parsing, as the
    Should clauses of one Boolean: the parser's scores at a fraction of its cost.
    `words`: the text's words, each once (the parser, too, drops a word typed
    twice; `Foo foo` stays two). None when an operator or an over-long word needs
    the parser."""
    if not _OPERATORS.isdisjoint(words):
        return None
    clauses = []
    # As the parser sees them: `_` deleted, then a word typed twice dropped.
    for word in dict.fromkeys(map(index_text, words)):
        if not word:
            continue  # `_` alone: no token
        token = word.lower()
        if len(token.encode()) >= _MAX_TOKEN_BYTES:
            return None  # the analyzer drops it: leave that to the parser
        for name, weight in _WEIGHTED_FIELDS:
            query = _TERM(schema, name, token, index_option="freq")
            clauses.append((_SHOULD, query if weight == 1.0 else _BOOST(query, weight)))
    return clauses


def _plain_words_query(schema: tantivy.Schema, text: str) -> tantivy.Query | None:
    """`_plain_words_clauses` as one query, for text of plain words; None for any other text."""
    if not _PLAIN_WORDS.fullmatch(text):
        return None
    words = list(dict.fromkeys(text.split()))
    clauses = _plain_words_clauses(schema, words) if words else None
    return None if clauses is None else _BOOLEAN(clauses)


def _telling_parts(word: str) -> list[str]:
    """The sub-words of a compound query word that say something: two letters or
    more, not only digits (`x0e7` has none)."""
    return [p for p in dict.fromkeys(split_identifier(word)) if len(p) > 1 and not p.isdigit()]


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
    """The workspace file's bytes for line hits: b"" when it is gone or unreadable, when
    a link now stands on its path (never followed: it could lead to a secret outside the
    workspace), when it is hard-linked or not a regular file, or when it now reads as a
    credential file (changed since it was indexed). Line hits go to the model."""
    parts = path.split("/")
    if "" in parts or ".." in parts or "." in parts:
        return b""  # never from our walk: an index the repository shipped (`../../.ssh/id_rsa`)
    try:
        data = safe_files.read_bytes_no_links(_real_root(str(root)), path)
    except (OSError, PolicyViolation):
        return b""
    if secret_kind_of_bytes(data) is not None:
        return b""
    return data


@functools.lru_cache(maxsize=16)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


def paths_by_id(paths: Iterable[str]) -> dict[int, str] | None:
    """The index's paths by their `path_id` fast-field value; None if two collide
    (64-bit hashes: never seen; hits then fetch their stored documents)."""
    paths = list(paths)
    by_id = dict(zip(map(f.path_id, paths), paths))
    return by_id if len(by_id) == len(paths) else None


def run(
    index: tantivy.Index,
    searcher: tantivy.Searcher,
    compiled: CompiledQuery,
    *,
    top_k: int,
    paths: list[str] | None,
    lang: str | None,
    root: Path | None = None,
    paths_by_id: dict[int, str] | None = None,
) -> list[FileHit]:
    """The top `top_k` files; with `root`, each with its line hits (read from the file
    when first asked for). Only the returned files are looked up (and those tied
    with the last one, to break the tie by path): by `paths_by_id` from the
    `path_id` fast field when given, else from their stored fields."""
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
    if not cut:
        return []
    hits = hits[:cut]
    found: list[str | None] = [None] * cut
    if paths_by_id is not None:
        found = list(map(paths_by_id.get, searcher.fast_field_values(f.PATH_ID, [address for _, address in hits])))
    scored = []
    for (score, address), path in zip(hits, found):
        if path is None:  # not in the map (no map; an index written before the field)
            path = searcher.doc(address).get_first(f.PATH)
        scored.append((round(score, 5), path))
    if cut > 1:  # by path, then (stable) by score, best first: equal scores stay in path order
        scored.sort(key=_PATH_OF)
        scored.sort(key=_SCORE_OF, reverse=True)
    source = None if root is None else _LineSource(root, compiled)
    return [FileHit(path, score, language_for(path), None, source) for score, path in scored[:top_k]]


_SCORE_OF, _PATH_OF = operator.itemgetter(0), operator.itemgetter(1)


def symbol_table(doc: tantivy.Document) -> list[list[Any]]:
    raw = doc.get_first(f.SYMBOL_TABLE)
    return json.loads(bytes(raw)) if raw else []


def glob_filter(patterns: str, paths: list[str]) -> list[str]:
    """Paths matching a gitignore-style glob (`*.py`, `src/**/test_*.py`, `docs/`)."""
    spec = gitignore_spec([p for p in re.split(r"[,\s]+", patterns) if p])
    return [p for p in paths if spec.match_file(p)]
