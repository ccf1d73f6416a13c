"""Turn one file's bytes into a tantivy document (or a reason to skip it)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import tantivy

from . import schema as f
from .languages import language_for, looks_binary
from .manifest import SkippedFile
from .symbols import extract_symbols
from .tokenize import identifier_parts, split_identifier


@dataclass(frozen=True, slots=True)
class PreparedFile:
    path: str
    sha256: str
    size: int
    document: tantivy.Document


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def prepare(path: str, data: bytes, *, max_file_bytes: int, sha256: str | None = None) -> PreparedFile | SkippedFile:
    """Analyse one file; binary and oversized files are skipped with the reason."""
    digest = sha256 or sha256_hex(data)
    if len(data) > max_file_bytes:
        return SkippedFile(path=path, reason="too_large", sha256=digest)
    if looks_binary(data):
        return SkippedFile(path=path, reason="binary", sha256=digest)
    text = data.decode("utf-8", "replace")
    lang = language_for(path)
    symbols = extract_symbols(lang, text)
    symbol_words = []
    for sym in symbols:
        symbol_words.append(sym.name)
        symbol_words.extend(split_identifier(sym.name))
    doc = tantivy.Document()
    doc.add_text(f.PATH, path)
    doc.add_text(f.PATH_TEXT, path + " " + " ".join(split_identifier(path.replace("/", "_").replace(".", "_"))))
    doc.add_text(f.LANG, lang)
    doc.add_text(f.CONTENT, text)
    doc.add_text(f.PARTS, identifier_parts(text))
    doc.add_text(f.SYMBOLS, " ".join(symbol_words))
    doc.add_bytes(f.SYMBOL_TABLE, json.dumps([s.to_list() for s in symbols], separators=(",", ":")).encode())
    doc.add_unsigned(f.SIZE, len(data))
    doc.add_text(f.SHA256, digest)
    return PreparedFile(path, digest, len(data), doc)
