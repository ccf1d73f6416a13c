"""The CPU-heavy half of indexing a file, kept free of tantivy so it can run in
worker processes: hash, skip decisions, decoding, symbols and sub-words.

`analyse_batch` is what a build's process pool runs; small builds and
incremental updates call `analyse` in-process.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from deepseek_ls.policy.secret_files import secret_kind

from .languages import language_for, looks_binary
from .manifest import SkippedFile
from .symbols import Symbol, extract_symbols
from .tokenize import identifier_parts


@dataclass(frozen=True, slots=True)
class AnalysedFile:
    path: str
    sha256: str
    size: int
    lang: str
    text: str
    symbols: list[Symbol]
    parts: str  # the `parts` field: sub-words of compound identifiers


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def analyse(path: str, data: bytes, *, max_file_bytes: int) -> AnalysedFile | SkippedFile:
    """Analyse one file; binary and oversized files are skipped with the reason."""
    digest = sha256_hex(data)
    if len(data) > max_file_bytes:
        return SkippedFile(path=path, reason="too_large", sha256=digest)
    if looks_binary(data):
        return SkippedFile(path=path, reason="binary", sha256=digest)
    text = data.decode("utf-8", "replace")
    if secret_kind(text) is not None:  # a credential file with no telling name: never indexed
        return SkippedFile(path=path, reason="secret", sha256=digest)
    lang = language_for(path)
    return AnalysedFile(path, digest, len(data), lang, text, extract_symbols(lang, text), identifier_parts(text))


def analyse_batch(items: list[tuple[str, bytes]], max_file_bytes: int) -> list[AnalysedFile | SkippedFile]:
    return [analyse(path, data, max_file_bytes=max_file_bytes) for path, data in items]
