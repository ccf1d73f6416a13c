"""The CPU-heavy half of indexing a file, kept free of tantivy so it can run in
worker processes: hash, skip decisions, decoding, symbols and sub-words.

`analyse_batch` is what a build's process pool runs; small builds and
incremental updates call `analyse` in-process. Nothing here imports pydantic or
tantivy, so a spawned worker starts in a fraction of the time (skips come back
as `Skipped`; the build turns them into the manifest's `SkippedFile`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from deepseek_ls.policy.secret_files import secret_kind

from .languages import language_for, looks_binary
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


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str  # too_large | binary | secret
    sha256: str


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def analyse(path: str, data: bytes, *, max_file_bytes: int) -> AnalysedFile | Skipped:
    """Analyse one file; binary and oversized files are skipped with the reason."""
    digest = sha256_hex(data)
    if len(data) > max_file_bytes:
        return Skipped(path, "too_large", digest)
    if looks_binary(data):
        return Skipped(path, "binary", digest)
    text = data.decode("utf-8", "replace")
    if secret_kind(text) is not None:  # a credential file with no telling name: never indexed
        return Skipped(path, "secret", digest)
    lang = language_for(path)
    return AnalysedFile(path, digest, len(data), lang, text, extract_symbols(lang, text), identifier_parts(text))


def analyse_batch(items: list[tuple[str, bytes]], max_file_bytes: int) -> list[AnalysedFile | Skipped]:
    return [analyse(path, data, max_file_bytes=max_file_bytes) for path, data in items]
