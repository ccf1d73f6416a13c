"""Full builds and incremental updates: from workspace files to a committed index.

Both return the new `Manifest` (the caller switches to it atomically) and a
`BuildReport`. A full build writes a fresh generation directory; an update
edits the current generation in place (tantivy commits are atomic, and the
manifest is rewritten after the commit).
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import shutil
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Literal

import tantivy
from pydantic import BaseModel, Field

from ..config_models import IndexConfig
from . import schema as f
from .analyse import AnalysedFile, Skipped, analyse, analyse_batch, decode, sha256_hex
from .document import to_document
from .filestate import FileStateCache
from .freshness import diff, hash_snapshot
from .manifest import Manifest, SkippedFile, merkle_root
from .reader import ContentReader, FileBytes, UnreadableFile, UnstableFile, disk_stat
from .schema import SCHEMA_VERSION
from .sources import Snapshot, SourceFile, resolve_paths, take_snapshot
from .storage import build_threads, create_index, finish, new_writer, next_generation, open_index


log = logging.getLogger(__name__)

PARALLEL_MIN_FILES = 200  # below this, starting worker processes costs more than it saves


@dataclass(frozen=True, slots=True)
class BuildProgress:
    done: int
    total: int
    files_per_second: float
    path: str


ProgressCallback = Callable[[BuildProgress], None]


class BuildCancelled(RuntimeError):
    """The build was cancelled; the previous index (if any) is untouched."""


class BuildReport(BaseModel):
    kind: Literal["build", "update"]
    files_indexed: int = 0  # documents written by this run
    bytes_indexed: int = 0
    removed: list[str] = Field(default_factory=list)
    skipped: list[SkippedFile] = Field(default_factory=list)
    restarted: list[str] = Field(default_factory=list)  # re-read: changed while being indexed
    total_files: int = 0  # documents in the index afterwards
    seconds: float = 0.0
    baseline_commit: str | None = None
    generation: str = ""

    @property
    def mb_per_second(self) -> float:
        return self.bytes_indexed / 1e6 / self.seconds if self.seconds > 0 else 0.0


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _Batch:
    """Documents going into one writer, and the bookkeeping the manifest needs."""

    def __init__(self, writer: tantivy.IndexWriter, config: IndexConfig, cache: FileStateCache) -> None:
        self.writer = writer
        self.config = config
        self.cache = cache
        self.files: dict[str, str] = {}
        self.skipped: dict[str, SkippedFile] = {}
        self.bytes = 0
        self.count = 0

    def add(self, src: SourceFile, content: FileBytes) -> None:
        result = analyse(src.path, content.data, max_file_bytes=self.config.max_file_bytes, keep_text=True)
        self.add_result(src, content, result)

    def add_result(self, src: SourceFile, content: FileBytes, result: AnalysedFile | Skipped) -> None:
        self.cache.record(src.path, result.sha256, oid=src.oid, mtime_ns=content.mtime_ns, size=content.size)
        if isinstance(result, AnalysedFile):
            text = result.text if result.text is not None else decode(content.data)
            self.writer.add_document(to_document(result, text))
            self.files[src.path] = result.sha256
            self.skipped.pop(src.path, None)
            self.bytes += result.size
            self.count += 1
        else:
            self.files.pop(src.path, None)
            self.skipped[src.path] = SkippedFile(path=result.path, reason=result.reason, sha256=result.sha256)

    def unreadable(self, src: SourceFile, reason: str) -> None:
        self.skipped[src.path] = SkippedFile(path=src.path, reason="unreadable", sha256="", detail=reason)

    def remove(self, path: str) -> None:
        self.writer.delete_documents_by_term(f.PATH, path)
        self.files.pop(path, None)
        self.skipped.pop(path, None)


_Item = tuple[SourceFile, "FileBytes | None"]


def auto_workers() -> int:
    """`index.build_workers = 0`: one worker process per CPU but one, which tantivy's
    indexing thread keeps busy. On 2 CPUs that is in-process analysis: measured side by
    side (bench/bench_index.py), two spawned workers took 1.3-1.4x the CPU of in-process
    analysis (each starts an interpreter) and were no faster, since the three busy
    threads share two cores."""
    return max(1, (os.cpu_count() or 1) - 1)


class _Analyser:
    """Runs `analyse` in-process, or for big builds in a pool of worker processes
    (hashing, the secret check and symbols are CPU-bound), always yielding results
    in input order so the build stays deterministic."""

    CHUNK = 32

    def __init__(self, config: IndexConfig, n_files: int) -> None:
        self.max_file_bytes = config.max_file_bytes
        self.workers = config.build_workers or auto_workers()
        self.pool: ProcessPoolExecutor | None = None
        if self.workers > 1 and n_files >= PARALLEL_MIN_FILES:
            # spawn, not fork: the language server has threads, and forking them is unsafe.
            self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def results(
        self, items: Iterator[_Item]
    ) -> Iterator[tuple[SourceFile, FileBytes | None, AnalysedFile | Skipped | None]]:
        if self.pool is None:  # in-process (the default on 2 CPUs): file by file, no chunks to keep
            limit = self.max_file_bytes
            for src, content in items:
                yield src, content, None if content is None else analyse(
                    src.path, content.data, max_file_bytes=limit, keep_text=True)
            return
        in_flight: deque[tuple[list[_Item], Future | None]] = deque()
        while True:
            chunk = list(itertools.islice(items, self.CHUNK if self.pool is not None else 1))
            if chunk:
                future = None
                if self.pool is not None:
                    try:
                        future = self.pool.submit(analyse_batch, self._work(chunk), self.max_file_bytes)
                    except (BrokenProcessPool, RuntimeError) as exc:
                        self._give_up_on_workers(exc)
                in_flight.append((chunk, future))
            while in_flight and (not chunk or len(in_flight) > 2 * self.workers or self.pool is None):
                done_chunk, future = in_flight.popleft()
                analysed = iter(self._collect(done_chunk, future))
                for src, content in done_chunk:
                    yield src, content, None if content is None else next(analysed)
            if not chunk:
                return

    def _work(self, chunk: list[_Item]) -> list[tuple[str, bytes]]:
        return [(src.path, content.data) for src, content in chunk if content is not None]

    def _collect(self, chunk: list[_Item], future: Future | None) -> list[AnalysedFile | Skipped]:
        if future is not None:
            try:
                return future.result()
            except BrokenProcessPool as exc:
                self._give_up_on_workers(exc)
        return analyse_batch(self._work(chunk), self.max_file_bytes, keep_text=True)

    def _give_up_on_workers(self, exc: BaseException) -> None:
        """Workers can die (OOM killer) or fail to start (a `__main__` spawn cannot
        re-import): finish the build in-process rather than fail it."""
        if self.pool is not None:
            log.warning("index build workers failed (%s); analysing files in this process", exc)
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None


def _manifest(
    files: dict[str, str], skipped: dict[str, SkippedFile], *, baseline: str | None, ignore_hash: str, storage
) -> Manifest:
    pairs = sorted(files.items())
    return Manifest(
        schema_version=SCHEMA_VERSION,
        baseline_commit=baseline,
        files=pairs,
        merkle_root=merkle_root(pairs),
        ignore_rules_hash=ignore_hash,
        skipped=sorted(skipped.values(), key=lambda s: s.path),
        built_at=_now(),
        storage=storage,
    )


def full_build(
    index_dir: Path,
    snapshot: Snapshot,
    config: IndexConfig,
    cache: FileStateCache,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> tuple[Manifest, BuildReport]:
    """Index every file of `snapshot` into a new generation directory."""
    started = time.perf_counter()
    gen_dir = index_dir / next_generation(index_dir)
    index = create_index(gen_dir)
    writer = new_writer(index, build_threads(config.build_threads))
    batch = _Batch(writer, config, cache)
    disk_reads: dict[str, tuple[int | None, int | None]] = {}
    restarted: list[str] = []
    total = len(snapshot.files)
    analyser = _Analyser(config, total)
    try:
        with ContentReader(snapshot.root) as reader:

            def contents() -> Iterator[_Item]:
                for src in snapshot.files.values():
                    if cancel is not None and cancel.is_set():
                        raise BuildCancelled("index build cancelled")
                    content = _read(batch, reader, src, check_after=False)  # all re-checked below
                    if content is not None and src.oid is None:
                        disk_reads[src.path] = (content.mtime_ns, content.size)
                    yield src, content

            for done, (src, content, result) in enumerate(analyser.results(contents()), start=1):
                if content is not None and result is not None:
                    batch.add_result(src, content, result)
                if progress is not None:
                    elapsed = time.perf_counter() - started
                    progress(BuildProgress(done, total, done / elapsed if elapsed else 0.0, src.path))
            # A file edited after we read it is read again, alone.
            root = str(snapshot.root)
            for path, stat in disk_reads.items():
                if disk_stat(os.path.join(root, path)) != stat:
                    restarted.append(path)
                    batch.remove(path)
                    content = _read(batch, reader, SourceFile(path))
                    if content is not None:
                        batch.add(SourceFile(path), content)
        if cancel is not None and cancel.is_set():
            raise BuildCancelled("index build cancelled")
        storage = finish(writer, gen_dir)
    except BaseException:
        analyser.close()
        writer.rollback()  # stops tantivy's threads writing into the directory we remove
        shutil.rmtree(gen_dir, ignore_errors=True)
        raise
    analyser.close()
    manifest = _manifest(
        batch.files, batch.skipped, baseline=snapshot.baseline_commit,
        ignore_hash=snapshot.ignore_rules_hash, storage=storage,
    )
    report = BuildReport(
        kind="build", files_indexed=batch.count, bytes_indexed=batch.bytes,
        skipped=manifest.skipped, restarted=restarted, total_files=len(manifest.files),
        seconds=time.perf_counter() - started, baseline_commit=snapshot.baseline_commit,
        generation=gen_dir.name,
    )
    return manifest, report


def _read(batch: _Batch, reader: ContentReader, src: SourceFile, *, check_after: bool = True) -> FileBytes | None:
    """The file's bytes; None when it vanished since the snapshot or cannot be read (recorded)."""
    try:
        return reader.read(src, check_after=check_after)
    except (UnstableFile, UnreadableFile) as exc:
        batch.unreadable(src, str(exc))
    except OSError as exc:
        batch.unreadable(src, f"{exc.__class__.__name__}: {exc.strerror or exc}")
    return None


def incremental_update(
    index_dir: Path,
    root: Path,
    manifest: Manifest,
    config: IndexConfig,
    cache: FileStateCache,
    *,
    paths: list[str] | None = None,
    writer_for: Callable[[Path], tantivy.IndexWriter] | None = None,
) -> tuple[Manifest, BuildReport, tantivy.IndexWriter | None]:
    """Re-index only what changed since `manifest` (all of the workspace, or `paths`).

    `writer_for(generation_dir)` gives the writer to use (the caller may keep
    one open between updates); by default a new one is opened. Returns the new
    manifest, the report, and the writer (None when nothing changed), whose
    background merges the caller must `storage.settle()`.
    """
    started = time.perf_counter()
    baseline, ignore_hash = manifest.baseline_commit, manifest.ignore_rules_hash
    changed: dict[str, tuple[SourceFile, FileBytes] | None] = {}  # None = remove
    with ContentReader(root) as reader:
        if paths is None:
            snapshot = take_snapshot(root, config.exclude)
            baseline, ignore_hash = snapshot.baseline_commit, snapshot.ignore_rules_hash
            state = hash_snapshot(snapshot, cache, reader, manifest.seen)
            for change in diff(manifest.seen, state.hashes):
                if change.change == "deleted":
                    changed[change.path] = None
                    continue
                src = snapshot.files[change.path]
                content = state.read.get(change.path) or reader.read(src)
                changed[change.path] = (src, content) if content is not None else None
        else:
            for path, src in resolve_paths(root, paths, config.exclude).items():
                try:
                    content = reader.read_disk(path) if src is not None else None
                except OSError as exc:  # includes UnstableFile: leave it stale, say why
                    log.warning("not re-indexing %s: %s", path, exc)
                    continue
                if src is None or content is None:
                    if path in manifest.seen:
                        changed[path] = None
                elif sha256_hex(content.data) != manifest.seen.get(path):
                    changed[path] = (src, content)
    gen_dir = index_dir / manifest.storage.generation
    if not changed:
        same = (baseline, ignore_hash) == (manifest.baseline_commit, manifest.ignore_rules_hash)
        unchanged = manifest if same else manifest.model_copy(
            update={"baseline_commit": baseline, "ignore_rules_hash": ignore_hash}
        )
        report = BuildReport(
            kind="update", total_files=len(manifest.files), seconds=time.perf_counter() - started,
            baseline_commit=baseline, generation=gen_dir.name,
        )
        return unchanged, report, None
    writer = writer_for(gen_dir) if writer_for is not None else new_writer(open_index(gen_dir))
    batch = _Batch(writer, config, cache)
    batch.files = dict(manifest.file_map)
    batch.skipped = {s.path: s for s in manifest.skipped}
    removed: list[str] = []
    for path, item in sorted(changed.items()):
        batch.remove(path)
        if item is None:
            removed.append(path)
        else:
            batch.add(*item)
    # Do not wait for tantivy's merges here: below 10,000 documents its merge
    # policy periodically rewrites the whole index (seconds), and a save must
    # not wait for that. The caller settles the writer in the background.
    storage = finish(writer, gen_dir, previous=manifest.storage, wait_merges=False)
    new_manifest = _manifest(batch.files, batch.skipped, baseline=baseline, ignore_hash=ignore_hash, storage=storage)
    report = BuildReport(
        kind="update", files_indexed=batch.count, bytes_indexed=batch.bytes, removed=removed,
        skipped=[s for s in new_manifest.skipped if s.path in changed], total_files=len(new_manifest.files),
        seconds=time.perf_counter() - started, baseline_commit=baseline, generation=gen_dir.name,
    )
    return new_manifest, report, writer
