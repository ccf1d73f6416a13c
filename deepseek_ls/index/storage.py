"""The tantivy side: generation directories, writers, integrity of segment files.

Each full build writes a new generation directory (`gen-000042/`) and only
then switches `manifest.json` to it, so a cancelled or failed build leaves the
previous index untouched and readers in other processes keep working. The
manifest records the size and sha256 of every live segment file; opening
checks them, so a truncated or tampered index is reported corrupt instead of
answering wrongly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import tantivy

from .manifest import Storage
from .schema import build_schema, register_analyzers

_GEN = re.compile(r"^gen-(\d{6})$")
WRITER_HEAP_BYTES = 128_000_000


class StorageCorrupt(RuntimeError):
    """The index files do not match what the manifest recorded."""


def next_generation(index_dir: Path) -> str:
    numbers = [int(m.group(1)) for p in index_dir.iterdir() if (m := _GEN.match(p.name))]
    return f"gen-{max(numbers, default=0) + 1:06d}"


def create_index(directory: Path) -> tantivy.Index:
    directory.mkdir(parents=True, exist_ok=False)
    index = tantivy.Index(build_schema(), path=str(directory), reuse=False)
    register_analyzers(index)
    return index


def open_index(directory: Path) -> tantivy.Index:
    try:
        index = tantivy.Index.open(str(directory))
    except Exception as exc:  # tantivy raises ValueError for most, but not all, damage
        raise StorageCorrupt(f"tantivy cannot open {directory.name}: {exc}") from exc
    register_analyzers(index)
    return index


def new_writer(index: tantivy.Index, threads: int = 1) -> tantivy.IndexWriter:
    """One indexing thread for updates; a full build may ask for more (each thread
    writes its own segment: results do not depend on it, since ties are broken by
    path and BM25's statistics are the whole index's)."""
    return index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=threads)


MAX_BUILD_THREADS = 4


def build_threads(configured: int) -> int:
    """`index.build_threads`; 0 = one per CPU, at most `MAX_BUILD_THREADS`. On 2 CPUs
    two threads measured 1.38-1.47x raw tantivy's wall time against 1.74-1.89x with
    one, for 1.41-1.45x its CPU against 1.34-1.40x (bench/bench_index.py, docs/index.md)."""
    return configured or max(1, min(os.cpu_count() or 1, MAX_BUILD_THREADS))


def finish(
    writer: tantivy.IndexWriter, directory: Path, previous: Storage | None = None, *, wait_merges: bool = True
) -> Storage:
    """Commit and describe the resulting files.

    With `wait_merges=False` the description is of the committed state while
    tantivy may still be merging segments in the background; the caller must
    then `settle()` the writer (under the write lock) and record the result.
    """
    opstamp = writer.commit()
    writer.garbage_collect_files()
    if wait_merges:
        writer.wait_merging_threads()
    return describe(directory, opstamp, previous)


def settle(writer: tantivy.IndexWriter, directory: Path, storage: Storage) -> Storage:
    """Wait for the writer's merges to end; the files as they are then."""
    writer.wait_merging_threads()
    return describe(directory, storage.opstamp, storage)


def _live_files(directory: Path) -> tuple[dict, list[Path]]:
    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    seg_ids = [s["segment_id"].replace("-", "") for s in meta.get("segments", [])]
    files = [directory / "meta.json"]
    for path in sorted(directory.iterdir()):
        if path.name.split(".", 1)[0] in seg_ids:
            files.append(path)
    return meta, files


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def describe(directory: Path, opstamp: int, previous: Storage | None = None) -> Storage:
    """Sizes and digests of the live files. Segment files are write-once in
    tantivy, so digests of files `previous` already described are reused; only
    new segments (and meta.json) are hashed, which keeps updates cheap.

    A writer kept open between commits may finish a merge (new meta.json, old
    segment files removed) while we look: look again until meta.json held still."""
    for _ in range(20):
        before = (directory / "meta.json").read_bytes()
        try:
            storage = _describe_once(directory, opstamp, previous)
        except FileNotFoundError:
            continue
        if (directory / "meta.json").read_bytes() == before:
            return storage
    return _describe_once(directory, opstamp, previous)


def _describe_once(directory: Path, opstamp: int, previous: Storage | None) -> Storage:
    meta, files = _live_files(directory)
    known = previous.files if previous and previous.generation == directory.name else {}
    num_docs = sum(int(s["max_doc"]) - int((s.get("deletes") or {}).get("num_deleted_docs", 0))
                   for s in meta.get("segments", []))
    return Storage(
        generation=directory.name,
        opstamp=opstamp,
        num_docs=num_docs,
        files={p.name: _describe_file(p, known) for p in files},
    )


def _describe_file(path: Path, known: dict[str, tuple[int, str]]) -> tuple[int, str]:
    size = path.stat().st_size
    if path.name != "meta.json" and path.name in known and known[path.name][0] == size:
        return known[path.name]
    return size, _digest(path)


def verify(directory: Path, storage: Storage, verified: set[tuple[str, int, str]] | None = None) -> None:
    """Raise StorageCorrupt unless every recorded file is present and unchanged.

    `verified` remembers files already hashed by this process (segment files are
    write-once), so following another process's small update costs a few stats.
    """
    if not directory.is_dir():
        raise StorageCorrupt(f"index directory {directory.name} is missing")
    for name, (size, sha) in sorted(storage.files.items()):
        path = directory / name
        try:
            actual = path.stat().st_size
        except OSError:
            raise StorageCorrupt(f"index file {name} is missing") from None
        if actual != size:
            raise StorageCorrupt(f"index file {name} has {actual} bytes, expected {size} (truncated?)")
        key = (f"{directory.name}/{name}", size, sha)
        if verified is not None and key in verified and name != "meta.json":
            continue
        if _digest(path) != sha:
            raise StorageCorrupt(f"index file {name} does not match its recorded sha256 (tampered?)")
        if verified is not None:
            verified.add(key)
    try:
        meta, _ = _live_files(directory)
    except (OSError, ValueError, KeyError) as exc:
        raise StorageCorrupt(f"meta.json unreadable: {exc}") from exc
    if int(meta.get("opstamp", -1)) != storage.opstamp:
        raise StorageCorrupt(f"index opstamp {meta.get('opstamp')} != manifest's {storage.opstamp}")


def remove_generations(index_dir: Path, keep: str) -> None:
    """Delete every generation directory but `keep` (best effort)."""
    for path in index_dir.iterdir():
        if _GEN.match(path.name) and path.name != keep:
            shutil.rmtree(path, ignore_errors=True)
