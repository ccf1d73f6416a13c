"""`GroupCommitWriter`: one thread per process that writes event lines and `fdatasync`s them
in batches (group commit).

`EventLog.submit` prepares a line's payload on the caller's thread and queues it here; the
thread takes everything queued, writes each log's lines with one `write` and one
`fdatasync`, then resolves each event's future. A future resolves only after the fsync of
its batch, so whoever waits on it (a blocking `append`, or the agent's `await
session.synced()` before it answers) acknowledges only durable events. While one batch is
being synced the next one gathers, so at full rate many events share one fsync, and the
event loop never waits for the disk.
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future
from typing import Any, Protocol


class BatchTarget(Protocol):
    def _write_batch(self, items: list[tuple[str, Any]]) -> list[Any]:
        """Write and sync these (kind, payload) events in order; return the stored events."""


class GroupCommitWriter:
    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[BatchTarget, str, Any, Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def submit(self, target: BatchTarget, kind: str, payload: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._ensure_thread()
        self._queue.put((target, kind, payload, future))
        return future

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="deepseek-event-writer", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            # Per log, in queue order; logs are written one after the other.
            per_target: dict[int, list[tuple[BatchTarget, str, Any, Future[Any]]]] = {}
            for item in batch:
                per_target.setdefault(id(item[0]), []).append(item)
            for items in per_target.values():
                target = items[0][0]
                try:
                    events = target._write_batch([(kind, payload) for _, kind, payload, _ in items])
                except BaseException as error:  # noqa: BLE001 - handed to every waiter of the batch
                    for *_, future in items:
                        future.set_exception(error)
                    continue
                for (*_, future), event in zip(items, events):
                    future.set_result(event)


_writer = GroupCommitWriter()


def writer() -> GroupCommitWriter:
    """The process's writer (a forked child gets a fresh one: threads do not survive fork)."""
    return _writer


def _after_fork() -> None:
    global _writer
    _writer = GroupCommitWriter()


os.register_at_fork(after_in_child=_after_fork)
