"""The tantivy schema of the code index and its analyzers.

Bump `SCHEMA_VERSION` whenever a field, an analyzer or what goes into a field
changes: an index whose manifest names another version is treated as corrupt
and rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib

import tantivy

SCHEMA_VERSION = 7

CODE_ANALYZER = "code"

# Field names.
PATH = "path"  # exact, for deletes and --path-glob filtering
PATH_TEXT = "path_text"  # the path's words, for ranking ("config" finds config.py)
LANG = "lang"  # exact
CONTENT = "content"  # whole identifiers, normalised (tokenize.index_text); not stored: line hits read the file itself
SYMBOLS = "symbols"  # names of top-level definitions, normalised, and their sub-words
SYMBOL_TABLE = "symbol_table"  # stored JSON [[name, kind, line], ...] for the repo map
PATH_ID = "path_id"  # fast field: a 64-bit hash of the path (`path_id`), read per hit without the doc store
# A file's size and sha256 are in the manifest, not in its document (schema 7: nothing read them there).

# Query-time weights: a definition named like the query beats a mention.
FIELD_BOOSTS: dict[str, float] = {SYMBOLS: 3.0, PATH_TEXT: 2.0, CONTENT: 1.0}


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field(PATH, stored=True, tokenizer_name="raw")
    sb.add_text_field(PATH_TEXT, tokenizer_name=CODE_ANALYZER)
    sb.add_text_field(LANG, stored=True, tokenizer_name="raw")
    # Not stored: fetching a hit then reads a few small fields instead of
    # decompressing the whole file from the doc store; line hits read the file.
    # Frequencies without positions: ranking needs how often a word occurs, nothing
    # reads where (line hits scan the file); positions were a third of tantivy's
    # indexing time. A quoted phrase is searched as its words.
    sb.add_text_field(CONTENT, stored=False, tokenizer_name=CODE_ANALYZER, index_option="freq")
    sb.add_text_field(SYMBOLS, tokenizer_name=CODE_ANALYZER, index_option="freq")
    sb.add_bytes_field(SYMBOL_TABLE, stored=True, indexed=False)
    sb.add_unsigned_field(PATH_ID, fast=True)
    return sb.build()


def path_id(path: str) -> int:
    """The `path_id` of a path: a query reads its hits' paths from this fast field
    (one columnar read) and looks them up in the manifest's paths, instead of
    fetching each hit's stored document (a doc-store block to decompress)."""
    return int.from_bytes(hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def code_analyzer() -> tantivy.TextAnalyzer:
    """Identifiers, lowercased: runs of letters and digits (text reaches these fields
    through `tokenize.index_text`, which deletes `_`, so `parse_config` is one
    token, `parseconfig`). tantivy's built-in tokenizer, not its regex one: `\\w+`
    through the regex tokenizer cost three times raw tantivy's whole indexing time."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(128))
        .filter(tantivy.Filter.lowercase())
        .build()
    )


def register_analyzers(index: tantivy.Index) -> None:
    """Analyzers are not persisted by tantivy: register them on every open."""
    index.register_tokenizer(CODE_ANALYZER, code_analyzer())
