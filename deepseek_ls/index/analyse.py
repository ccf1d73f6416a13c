"""The CPU-heavy half of indexing a file, kept free of tantivy so it can run in
worker processes: hash, skip decisions and symbols; all but the file's text,
which the caller already holds.

`analyse_batch` is what a build's process pool runs; small builds and
incremental updates call `analyse` in-process. Nothing here imports pydantic or
tantivy, so a spawned worker starts in a fraction of the time (skips come back
as `Skipped`; the build turns them into the manifest's `SkippedFile`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import NamedTuple

from deepseek_ls.policy.secret_files import secret_kind_of_bytes

from .languages import language_for, looks_binary
from .symbols import extract_symbols
from .tokenize import split_identifier, sub_words


class AnalysedFile(NamedTuple):
    """What indexing a file needs besides its text (`decode(data)`); small, so
    workers send it back cheaply while the caller already holds the bytes. A tuple:
    a build makes one per file (a frozen dataclass sets each field through
    `object.__setattr__`)."""

    path: str
    sha256: str
    size: int
    lang: str
    path_words: str  # the `path_text` field: the path and its sub-words
    symbol_words: str  # the `symbols` field: top-level names and their sub-words
    symbol_table: bytes  # stored JSON [[name, kind, line], ...] for the repo map
    text: str | None = None  # the decoded text, when analysed in-process (never sent back by a worker)


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str  # too_large | binary | secret
    sha256: str


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> str:
    """A file's text as the index sees it (invalid UTF-8 replaced)."""
    return data.decode("utf-8", "replace")


def analyse(path: str, data: bytes, *, max_file_bytes: int, keep_text: bool = False) -> AnalysedFile | Skipped:
    """Analyse one file; binary and oversized files are skipped with the reason.
    `keep_text`: hand back the decoded text too (in-process: saves decoding it again)."""
    digest = sha256_hex(data)
    if len(data) > max_file_bytes:
        return Skipped(path, "too_large", digest)
    if looks_binary(data):
        return Skipped(path, "binary", digest)
    if secret_kind_of_bytes(data) is not None:  # a credential file with no telling name: never indexed
        return Skipped(path, "secret", digest)
    text = decode(data)
    lang = language_for(path)
    symbols = extract_symbols(lang, text)
    names = [symbol.name for symbol in symbols]
    return AnalysedFile(
        path, digest, len(data), lang,
        path_words=" ".join([path, *split_identifier(path.replace("/", "_").replace(".", "_"))]),
        symbol_words=" ".join(names) + " " + sub_words(" ".join(filter(_compound, names))),
        symbol_table=_TABLE_JSON(symbols).encode(),
        text=text if keep_text else None,
    )


_TABLE_JSON = json.JSONEncoder(separators=(",", ":")).encode  # one encoder for every file


def _compound(name: str) -> bool:
    """Whether a name has sub-words (`parse_config`, `parseConfig`; not `parse`, `MAX`,
    `Parser`), without the sub-word regex: a build asks it of every definition."""
    core = name.strip("_")
    if not core or core.isdigit():
        return False
    if "_" in core or not core.isalpha():
        return True  # an inner `_`, or letters and digits (`utf8`, `BASE64`)
    capitalised = core[:1].isupper() and core[1:].islower()
    return not (core.islower() or core.isupper() or capitalised)


def analyse_batch(
    items: list[tuple[str, bytes]], max_file_bytes: int, keep_text: bool = False
) -> list[AnalysedFile | Skipped]:
    return [analyse(path, data, max_file_bytes=max_file_bytes, keep_text=keep_text) for path, data in items]
