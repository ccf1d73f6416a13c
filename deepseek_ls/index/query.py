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
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pathspec
import tantivy
from pydantic import BaseModel, Field, PrivateAttr, computed_field

from . import schema as f
from .tokenize import code_text, query_parts, query_words

MAX_LINES_PER_FILE = 5
MAX_OCCURRENCES_PER_TERM = 24
MAX_LINE_TERMS = 12
SNIPPET_CHARS = 160


class LineHit(BaseModel):
    line: int  # 1-based
    text: str  # the line, trimmed to a short snippet


class FileHit(BaseModel):
    """One ranked file. Its `lines` are computed on first access (or when the hit is
    serialised), so a caller that shows three results pays for three."""

    path: str
    score: float
    lang: str = "text"
    _lines: list[LineHit] | None = PrivateAttr(default=None)
    _load_lines: Callable[[], list[LineHit]] | None = PrivateAttr(default=None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lines(self) -> list[LineHit]:
        if self._lines is None:
            load, self._load_lines = self._load_lines, None
            self._lines = load() if load is not None else []
        return self._lines

    def with_lines(self, load: Callable[[], list[LineHit]]) -> "FileHit":
        self._load_lines = load
        return self


class QueryResult(BaseModel):
    query: str
    fresh: bool
    hits: list[FileHit] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


@dataclass
class CompiledQuery:
    query: tantivy.Query | None
    terms: list[str]  # the query's words as typed, for line hits
    part_terms: list[str]  # their sub-words: line hits only when no line has a whole word
    warnings: list[str]


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
    words = query_words(text)
    parts = query_parts(text)
    # Line hits look for the longest (most specific) words only: a paragraph-long
    # query from the planner must not scan every file once per word.
    terms = sorted(set(words), key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]
    part_terms = sorted(set(parts) - {w.lower() for w in words}, key=lambda t: (-len(t), t))[:MAX_LINE_TERMS]
    if not words:
        return CompiledQuery(None, [], [], [])
    fields = list(f.FIELD_BOOSTS)
    main, errors = _parse(index, text, fields, f.FIELD_BOOSTS)
    warnings: list[str] = []
    if errors:
        warnings.append(f"query syntax not understood ({errors[0]}); searched for its words instead")
        main, _ = _parse(index, " ".join(w.lower() for w in words), fields, f.FIELD_BOOSTS)
    clauses = [(tantivy.Occur.Should, main)]
    if parts:
        extra, _ = _parse(index, " ".join(parts), [f.PARTS], {f.PARTS: f.PARTS_BOOST})
        clauses.append((tantivy.Occur.Should, extra))
    return CompiledQuery(tantivy.Query.boolean_query(clauses), terms, part_terms, warnings)


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


def _occurrences(
    data: bytes, terms: list[str], *, ignore_case: bool = False, limit: int = MAX_LINES_PER_FILE
) -> dict[int, set[bytes]]:
    """Line start offset -> the terms seen on that line (at most `MAX_OCCURRENCES_PER_TERM`
    lines a term; `limit` when there is one term: every line then weighs the same and
    the first `limit` win). `bytes.find` per term, skipping to the next line after a
    hit: a memchr-speed scan that stops early; ignoring case folds ASCII letters only."""
    haystack = data.lower() if ignore_case else data
    per_line: dict[int, set[bytes]] = {}
    needles = dict.fromkeys((t.lower() if ignore_case else t).encode() for t in terms)
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
        per_line = _occurrences(data, terms, ignore_case=True, limit=limit) or _occurrences(
            data, part_terms or [], ignore_case=True, limit=limit
        )
    best = sorted(per_line.items(), key=lambda kv: (-sum(len(t) for t in kv[1]), kv[0]))[:limit]
    out, line, counted_to = [], 1, 0
    for start, _ in sorted(best):
        line += data.count(b"\n", counted_to, start)
        counted_to = start
        end = data.find(b"\n", start)
        text = data[start : end if end != -1 else len(data)].decode("utf-8", "replace")
        out.append(LineHit.model_construct(line=line, text=_snippet(text)))  # our own values
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
    when first asked for)."""
    if compiled.query is None or top_k <= 0 or (paths is not None and not paths):
        return []
    query = compiled.query if paths is None and lang is None else with_filters(
        index.schema, compiled.query, paths=paths, lang=lang
    )
    # Ask for a few more than needed: ties at the cut are broken by path, not by
    # segment order, so results do not depend on how tantivy merged segments.
    hits = searcher.search(query, limit=top_k + 16, count=False).hits
    cut = min(top_k, len(hits))
    while 0 < cut < len(hits) and round(hits[cut][0], 5) == round(hits[cut - 1][0], 5):
        cut += 1
    scored: list[tuple[float, str, Any]] = []
    for score, address in hits[:cut]:
        doc = searcher.doc(address)
        scored.append((round(score, 5), doc.get_first(f.PATH), doc))
    scored.sort(key=lambda item: (-item[0], item[1]))
    out = []
    for score, path, doc in scored[:top_k]:
        # Values from our own index: no validation needed (model_construct).
        hit = FileHit.model_construct(path=path, score=score, lang=doc.get_first(f.LANG) or "text")
        if root is not None:
            hit.with_lines(functools.partial(_lines_of, root, path, compiled.terms, compiled.part_terms))
        out.append(hit)
    return out


def _lines_of(root: Path, path: str, terms: list[str], part_terms: list[str]) -> list[LineHit]:
    return line_hits(file_bytes(root, path), terms, part_terms)


def symbol_table(doc: tantivy.Document) -> list[list[Any]]:
    raw = doc.get_first(f.SYMBOL_TABLE)
    return json.loads(bytes(raw)) if raw else []


def glob_filter(patterns: str, paths: list[str]) -> list[str]:
    """Paths matching a gitignore-style glob (`*.py`, `src/**/test_*.py`, `docs/`)."""
    spec = pathspec.GitIgnoreSpec.from_lines([p for p in re.split(r"[,\s]+", patterns) if p])
    return [p for p in paths if spec.match_file(p)]
