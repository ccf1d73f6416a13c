"""`CodeIndex`: the one object the rest of deepseek-ls uses to reach the index.

It lives at `.deepseek/index/` (`manifest.json`, `filestate.json`, the lock and
the tantivy generation directories). Opening, reading and the build/update
logic are here; who may write and when (locks, the kept-open writer session)
is in `writing.py`. Writes (build, update) take a file lock,
so the language server and a CLI in another terminal never write at once;
reads need no lock and notice other processes' writes by the manifest's stat.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import tantivy
from filelock import FileLock

from ..config_models import Config, IndexConfig, PolicyConfig
from ..sink import EventSink, NullSink
from . import query as q
from . import schema as f
from .build import BuildReport, ProgressCallback, full_build, incremental_update
from .filestate import FileStateCache
from .freshness import IndexStatus, diff, hash_snapshot
from .languages import normalize_language
from .manifest import Manifest, ManifestError, load_manifest, save_manifest
from .reader import ContentReader
from .repo_map import overview_order, render
from .schema import SCHEMA_VERSION
from .sources import deny_exclude_patterns, take_snapshot
from .storage import StorageCorrupt, open_index, remove_generations, verify
from .symbols import Symbol
from .writer_session import (
    WRITER_LINGER_SECONDS,
    WRITER_MAX_HOLD_SECONDS,
    WriterSession,
)
from .writing import LOCK_TIMEOUT_SECONDS, IndexWriting

log = logging.getLogger(__name__)

_RECHECKER_IDLE_SECONDS = 30.0


def _rechecking(ref: "weakref.ref[CodeIndex]", wake: threading.Event) -> None:
    """The background freshness re-check loop of one index: one `status()` per wake-up,
    wake-ups made meanwhile folded into the next; ends after a while without any,
    or once the index is gone (it holds the index only while checking)."""
    while True:
        woken = wake.wait(_RECHECKER_IDLE_SECONDS)
        index = ref()
        if index is None:
            return
        if not woken:
            with index._rechecker_lock:
                if not wake.is_set():
                    index._rechecker = None
                    return
            continue
        wake.clear()
        checked = index._fresh
        if checked is None or time.monotonic() - checked[0] > index.config.freshness_ttl_seconds:
            try:
                index.status()
            except Exception:  # noqa: BLE001 - a workspace going away under us; the next check retries
                log.debug("background freshness check failed", exc_info=True)
        del index


def _expired(checked: tuple[float, bool] | None) -> tuple[float, bool] | None:
    """The same answer, due for a re-check."""
    return None if checked is None else (float("-inf"), checked[1])


class IndexUnavailable(RuntimeError):
    """The index is missing or corrupt; `status` says which. Build it first."""

    def __init__(self, status: IndexStatus) -> None:
        hint = "run `deepseek-ls index build`"
        super().__init__(f"the code index is {status.state}: {status.reason} ({hint})")
        self.status = status


@dataclass
class _Open:
    manifest: Manifest
    index: tantivy.Index
    stamp: tuple[int, int, int]  # manifest.json (inode, mtime_ns, size)
    # One searcher (a snapshot of the committed segments) and schema for every query
    # until the manifest changes: a new `_Open` is made, after a reload, on every write.
    searcher: tantivy.Searcher = field(init=False)
    schema: tantivy.Schema = field(init=False)
    # Hits' paths by their `path_id` (None on a hash collision: hits then fetch their documents).
    paths_by_id: dict[int, str] | None = field(init=False)

    def __post_init__(self) -> None:
        self.searcher = self.index.searcher()
        self.schema = self.index.schema
        self.paths_by_id = q.paths_by_id(path for path, _ in self.manifest.files)


class CodeIndex(IndexWriting):
    """Build, update, check and query the workspace's code index (the write locks and
    the kept-open writer are `IndexWriting`'s, in writing.py)."""

    def __init__(
        self,
        root: Path,
        state_dir: Path,
        config: IndexConfig | None = None,
        *,
        sink: EventSink | None = None,
        deny_paths: Sequence[str] | None = None,
    ):
        self.root = Path(root).resolve()
        config = config or IndexConfig()
        # Secret locations (policy.deny_paths) are never indexed: index hits and the
        # repo map go into model prompts.
        denied = deny_exclude_patterns(PolicyConfig().deny_paths if deny_paths is None else deny_paths)
        self.config = config.model_copy(update={"exclude": [*config.exclude, *denied]})
        # Accepted for the common service signature; store/events.py has no index
        # event kinds yet, so nothing is emitted (queries made by the agent are
        # recorded by the tool host as ToolResult events).
        self.sink = sink or NullSink()
        self.dir = Path(state_dir) / "index"
        self.manifest_path = self.dir / "manifest.json"
        self._manifest_name = str(self.manifest_path)  # stat()ed on every query
        self._write_lock = FileLock(str(self.dir / "write.lock"), thread_local=False)
        self._writing = threading.Lock()
        self._session: WriterSession | None = None  # a writer kept open between updates
        self._session_lock = threading.Lock()
        self._mutex = threading.RLock()
        self._open: _Open | None = None
        self._fresh: tuple[float, bool] | None = None  # (checked at, fresh) for query()
        # Re-checks of `_fresh` run in this thread, never in a query (`is_fresh`).
        self._recheck = threading.Event()
        self._rechecker: threading.Thread | None = None
        self._rechecker_lock = threading.Lock()
        self._glob_cache: dict[tuple[str, str], list[str]] = {}
        self.lock_timeout = LOCK_TIMEOUT_SECONDS
        self.writer_linger = WRITER_LINGER_SECONDS  # keep the writer this long after a save
        self.writer_max_hold = WRITER_MAX_HOLD_SECONDS  # and never longer than this in all
        self._cache: FileStateCache | None = None
        self._verified: set[tuple[str, int, str]] = set()  # index files this process has hashed

    # ---- opening -------------------------------------------------------------------------

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._manifest_name)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _opened(self, *, wait_for_writers: bool = True) -> _Open:
        """The open index, reopened if another process (or we) rewrote the manifest.

        A mismatch seen while a write is in flight (here or in another process)
        may be that write half-recorded: wait for it and look again before
        calling the index corrupt.
        """
        try:
            return self._open_once()
        except IndexUnavailable as exc:
            if not wait_for_writers or exc.status.state != "corrupt" or not self._wait_for_writers():
                raise
            return self._open_once()

    def _open_once(self) -> _Open:
        stamp = self._stamp()
        current = self._open
        if current is not None and current.stamp == stamp:
            return current
        with self._mutex:
            if self._open is not None and self._open.stamp == stamp:
                return self._open
            if stamp is None:
                raise IndexUnavailable(IndexStatus(state="missing", reason="no index has been built"))
            try:
                manifest = load_manifest(self.manifest_path)
                if manifest.schema_version != SCHEMA_VERSION:
                    raise ManifestError(
                        f"schema version {manifest.schema_version}, this deepseek-ls needs {SCHEMA_VERSION}"
                    )
                gen_dir = self.dir / manifest.storage.generation
                same_gen = self._open is not None and self._open.manifest.storage.generation == manifest.storage.generation
                verify(gen_dir, manifest.storage, self._verified)
                index = self._open.index if same_gen else open_index(gen_dir)
                index.reload()
                if index.searcher().num_docs != manifest.storage.num_docs:
                    raise StorageCorrupt(
                        f"index holds {index.searcher().num_docs} documents, manifest says {manifest.storage.num_docs}"
                    )
            except FileNotFoundError:
                raise IndexUnavailable(IndexStatus(state="missing", reason="no index has been built")) from None
            except (ManifestError, StorageCorrupt) as exc:
                self._open = None
                raise IndexUnavailable(IndexStatus(state="corrupt", reason=str(exc))) from exc
            self._open = _Open(manifest, index, stamp)
            self._fresh = _expired(self._fresh)  # another process wrote: look again, in the background
            self._glob_cache.clear()
            return self._open

    def _adopt(self, manifest: Manifest, index: tantivy.Index | None = None, *, fresh: object = None) -> None:
        """Switch to a manifest we just wrote (no need to re-verify our own files).

        `fresh`: True (we just looked at the whole workspace), None (unknown: the
        last answer stands until the next check, which is due at once), or a
        previous `(checked_at, fresh)` value to keep."""
        save_manifest(self.manifest_path, manifest)
        if index is None:
            index = open_index(self.dir / manifest.storage.generation)
        index.reload()
        with self._mutex:
            self._open = _Open(manifest, index, self._stamp() or (0, 0, 0))
            if fresh is True:
                self._fresh = (time.monotonic(), True)
            else:
                self._fresh = _expired(self._fresh) if fresh is None else fresh  # type: ignore[assignment]
            self._glob_cache.clear()

    def _filestate(self) -> FileStateCache:
        """Loaded once per instance: it is only an accelerator, so another process's
        newer copy being overwritten costs a few rehashes, never a wrong answer."""
        if self._cache is None:
            self._cache = FileStateCache(self.dir / "filestate.json")
        return self._cache

    def build(self, progress: ProgressCallback | None = None, cancel: threading.Event | None = None) -> BuildReport:
        """Index the whole workspace from scratch (a new generation). Cancellable."""
        with self._locked():
            cache = self._filestate()
            snapshot = take_snapshot(self.root, self.config.exclude)
            manifest, report = full_build(self.dir, snapshot, self.config, cache, progress=progress, cancel=cancel)
            cache.forget_except(set(snapshot.files))
            self._adopt(manifest, fresh=True)
            cache.save()
            remove_generations(self.dir, keep=manifest.storage.generation)
            log.info("index built: %d files in %.2fs", report.total_files, report.seconds)
            return report

    def update(self, paths: list[str | Path] | None = None) -> BuildReport:
        """Re-index what changed: everything (`paths=None`) or just `paths` (on save).

        Returns once the change is committed and searchable; tantivy's segment
        merges go on in the background in the writer kept open for the next
        save. A missing or corrupt index is rebuilt in full instead.
        """
        try:
            self._opened()
        except IndexUnavailable as exc:
            log.warning("%s; rebuilding", exc)
            return self.build()
        rels = None if paths is None else self._relative(paths)
        if rels is not None and any((self.root / r).is_dir() for r in rels):
            rels = None  # a directory event: look at everything
        self._take_writing()
        try:
            session = self._claim_session()
            if session is None:
                self._lock_file()
            committed: Manifest | None = None
            broken = True

            def writer_for(gen_dir: Path) -> tantivy.IndexWriter:
                nonlocal session
                if session is None:
                    session = self._open_session(gen_dir)
                return session.writer

            try:
                current = self._opened(wait_for_writers=False)
                cache = self._filestate()
                manifest, report, writer = incremental_update(
                    self.dir, self.root, current.manifest, self.config, cache, paths=rels, writer_for=writer_for
                )
                if writer is not None:
                    committed = manifest
                if manifest is not current.manifest:
                    # After looking at the whole workspace the index is fresh; after some
                    # paths only, freshness is unknown until the next check.
                    self._adopt(manifest, current.index, fresh=True if rels is None else None)
                elif rels is None:
                    self._fresh = (time.monotonic(), True)
                if session is None or rels is None:
                    cache.save()  # else when the session closes: a saved file's entry is "racily
                    # clean" for a while anyway, so writing the cache on every save buys nothing
                broken = False
                return report
            finally:
                if session is None:
                    self._write_lock.release()
                else:
                    session.release(committed, broken=broken)
        finally:
            self._writing.release()

    def _relative(self, paths: list[str | Path]) -> list[str]:
        out = []
        for raw in paths:
            p = Path(os.path.normpath(raw))
            if p.is_absolute():
                try:
                    p = p.resolve().relative_to(self.root)
                except ValueError:
                    continue  # outside the workspace
            out.append(p.as_posix())
        return out

    # ---- reading -------------------------------------------------------------------------

    def status(self) -> IndexStatus:
        """Compare the index with the workspace now: fresh, stale (what changed), corrupt, missing."""
        try:
            current = self._opened()
        except IndexUnavailable as exc:
            return exc.status
        manifest = current.manifest
        started = time.monotonic()  # a file changed during the walk is seen by the next check
        cache = self._filestate()
        snapshot = take_snapshot(self.root, self.config.exclude)
        with ContentReader(self.root) as reader:
            state = hash_snapshot(snapshot, cache, reader)
        try:
            cache.save()
        except OSError:
            pass  # only an accelerator
        changed = diff(manifest.seen, state.hashes)
        if self._open is current:  # not a write adopted meanwhile (its answer stands)
            self._fresh = (started, not changed)
        return IndexStatus(
            state="stale" if changed else "fresh",
            changed=changed,
            baseline_commit=manifest.baseline_commit,
            files=len(manifest.files),
            built_at=manifest.built_at,
        )

    @classmethod
    def for_workspace(cls, root: Path, state_dir: Path, config: Config) -> "CodeIndex":
        """The workspace's index under `state_dir`, as `config` says (its `index` section; its
        `policy.deny_paths` never indexed). Built or not: see `is_built`, `status`."""
        return cls(root, state_dir, config.index, deny_paths=config.policy.deny_paths)

    def is_built(self) -> bool:
        """Cheap: whether a build has ever completed here (says nothing about freshness
        or integrity). Use it to decide whether a save should trigger `update`."""
        return self.manifest_path.is_file()

    def is_fresh(self) -> bool:
        """Freshness for query results: the last check's answer. Once it is older
        than `freshness_ttl_seconds` a re-check is started in a background thread
        (the workspace walk took ~55 ms on the standard library: a spike on every
        query that met it) and this answer stands until it ends. Runs inline only
        when this instance has no answer yet (it has not built, updated, checked or
        answered before) or the TTL is 0."""
        checked = self._fresh
        ttl = self.config.freshness_ttl_seconds
        if checked is None or ttl <= 0:
            return self.status().state == "fresh"
        if time.monotonic() - checked[0] > ttl:
            self._recheck_soon()
        return checked[1]

    def _recheck_soon(self) -> None:
        self._recheck.set()
        with self._rechecker_lock:  # against the thread ending just now
            if self._rechecker is None:
                self._rechecker = threading.Thread(
                    target=_rechecking, args=(weakref.ref(self), self._recheck), name="index-freshness", daemon=True
                )
                self._rechecker.start()

    def query(
        self, text: str, top_k: int = 10, path_glob: str | None = None, lang: str | None = None
    ) -> q.QueryResult:
        """Ranked files for `text`, with line hits. Raises IndexUnavailable if missing/corrupt."""
        current = self._opened()
        compiled = q.compile_query(current.index, text, current.schema)
        paths = None
        if path_glob:
            key = (current.manifest.merkle_root, path_glob)
            paths = self._glob_cache.get(key)
            if paths is None:
                paths = self._glob_cache[key] = q.glob_filter(path_glob, [p for p, _ in current.manifest.files])
        hits = q.run(
            current.index, current.searcher, compiled, top_k=top_k, paths=paths,
            lang=normalize_language(lang) if lang else None, root=self.root, paths_by_id=current.paths_by_id,
        )
        return q.QueryResult(query=text, fresh=self.is_fresh(), hits=hits, warnings=compiled.warnings)

    def symbols(self, paths: list[str]) -> dict[str, list[Symbol]]:
        """Top-level symbols of indexed files (files not in the index are left out)."""
        current = self._opened()
        searcher = current.searcher
        out: dict[str, list[Symbol]] = {}
        for path in paths:
            found = searcher.search(tantivy.Query.term_query(current.schema, f.PATH, path), 1).hits
            if found:
                doc = searcher.doc(found[0][1])
                out[path] = [Symbol.from_list(item) for item in q.symbol_table(doc)]
        return out

    def repo_map(self, query: str | None = None, token_budget: int | None = None) -> str:
        """Files and their top-level symbols, most relevant to `query` first, within ~token_budget."""
        current = self._opened()
        budget = token_budget if token_budget is not None else self.config.repo_map_tokens
        all_paths = [p for p, _ in current.manifest.files]
        ranked: list[str] = []
        if query:
            compiled = q.compile_query(current.index, query, current.schema)
            hits = q.run(
                current.index, current.searcher, compiled, top_k=50, paths=None, lang=None,
                paths_by_id=current.paths_by_id,
            )
            ranked = [h.path for h in hits]
        seen = set(ranked)
        order = ranked + [p for p in overview_order(all_paths) if p not in seen]

        def entries():
            # Fetch symbols lazily, in small batches: the budget usually ends the walk early.
            for start in range(0, len(order), 32):
                chunk = order[start : start + 32]
                table = self.symbols(chunk)
                for path in chunk:
                    yield path, table.get(path, [])

        return render(entries(), len(all_paths), budget)
