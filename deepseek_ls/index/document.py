"""An analysed file as a tantivy document."""

from __future__ import annotations

import json

import tantivy

from . import schema as f
from .analyse import AnalysedFile
from .tokenize import split_identifier


def to_document(a: AnalysedFile) -> tantivy.Document:
    symbol_words = []
    for sym in a.symbols:
        symbol_words.append(sym.name)
        symbol_words.extend(split_identifier(sym.name))
    doc = tantivy.Document()
    doc.add_text(f.PATH, a.path)
    doc.add_text(f.PATH_TEXT, a.path + " " + " ".join(split_identifier(a.path.replace("/", "_").replace(".", "_"))))
    doc.add_text(f.LANG, a.lang)
    doc.add_text(f.CONTENT, a.text)
    doc.add_text(f.PARTS, a.parts)
    doc.add_text(f.SYMBOLS, " ".join(symbol_words))
    doc.add_bytes(f.SYMBOL_TABLE, json.dumps([s.to_list() for s in a.symbols], separators=(",", ":")).encode())
    doc.add_unsigned(f.SIZE, a.size)
    doc.add_text(f.SHA256, a.sha256)
    return doc
