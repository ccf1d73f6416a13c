"""An analysed file as a tantivy document."""

from __future__ import annotations

import tantivy

from . import schema as f
from .analyse import AnalysedFile
from .tokenize import index_text


def to_document(a: AnalysedFile, text: str) -> tantivy.Document:
    """`text`: the file's decoded content (`analyse.decode`)."""
    doc = tantivy.Document()
    doc.add_text(f.PATH, a.path)
    doc.add_text(f.PATH_TEXT, index_text(a.path_words))
    doc.add_text(f.LANG, a.lang)
    doc.add_text(f.CONTENT, index_text(text))
    doc.add_text(f.SYMBOLS, index_text(a.symbol_words))
    doc.add_bytes(f.SYMBOL_TABLE, a.symbol_table)
    doc.add_unsigned(f.PATH_ID, f.path_id(a.path))
    return doc
