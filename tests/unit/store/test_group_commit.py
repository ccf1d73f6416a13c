"""The group-commit writer: an acknowledged event is always synced; events queued together
share one fdatasync; the agent's appends never hold the event loop while the disk syncs."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from deepseek_ls.agent.session import Session, deferred_appends
from deepseek_ls.store.log import EventLog, EventLogError

SID = "01900000-0000-7000-8000-0000000000c1"


@pytest.fixture
def synced_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every fdatasync of the writer, as the file size it made durable (a slow disk: 20 ms)."""
    sizes: list[int] = []
    real = os.fdatasync

    def slow_fdatasync(fd: int) -> None:
        time.sleep(0.02)
        real(fd)
        sizes.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fdatasync", slow_fdatasync)
    return sizes


def turn(text: str) -> dict:
    return {"role": "user", "content": text}


def test_never_ack_before_fsync_and_concurrent_appends_share_syncs(tmp_path: Path, synced_sizes: list[int]) -> None:
    log = EventLog(tmp_path / "events.jsonl", SID, redact_obj=lambda p: p)
    acked: list[tuple[int, int]] = []  # (seq_no, synced size when acknowledged)
    lock = threading.Lock()

    def appender(tag: str) -> None:
        for i in range(20):
            event = log.append("TurnAdded@v1", turn(f"{tag}-{i}"))
            with lock:
                acked.append((event.seq_no, max(synced_sizes, default=0)))

    threads = [threading.Thread(target=appender, args=(f"t{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    data = (tmp_path / "events.jsonl").read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]  # byte offset after each seq_no
    assert sorted(seq for seq, _ in acked) == list(range(1, 81))
    for seq, synced in acked:
        assert synced >= ends[seq - 1], f"event {seq} acknowledged before an fsync covered it"
    assert len(synced_sizes) < 80, "concurrent appends should share fdatasyncs (group commit)"


def test_no_loss_of_deferred_events_when_the_write_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed write (disk full) reaches whoever waits for the event, and leaves no partial line."""
    path = tmp_path / "events.jsonl"
    log = EventLog(path, SID, redact_obj=lambda p: p)
    log.append("TurnAdded@v1", turn("kept"))
    before = path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    _, future = log.submit("TurnAdded@v1", turn("lost"))
    with pytest.raises(EventLogError, match="No space left"):
        future.result(timeout=10)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert log.append("TurnAdded@v1", turn("next")).seq_no == 2


async def test_never_block_the_event_loop_while_the_agent_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside `deferred_appends()` (the agent driving a session) emit returns at once; the loop
    keeps ticking while the writer syncs; `synced()` returns only once all of it is on disk.

    The disk is held shut (fdatasync blocks on a gate) while the agent emits: emit returning at
    all proves it does not wait for the disk, with no wall-clock bound that a loaded machine
    could miss."""
    path = tmp_path / "events.jsonl"
    disk_open = threading.Event()
    syncing = threading.Event()
    synced_sizes: list[int] = []
    real = os.fdatasync

    def gated_fdatasync(fd: int) -> None:
        syncing.set()
        assert disk_open.wait(60), "the test never opened the disk"
        real(fd)
        synced_sizes.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fdatasync", gated_fdatasync)
    session = Session(SID, EventLog(path, SID, redact_obj=lambda p: p))
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    with deferred_appends():
        for i in range(50):
            session.emit("TurnAdded@v1", turn(f"e{i}"))
        assert synced_sizes == [], "an event became durable while the disk was shut"
        await asyncio.to_thread(syncing.wait, 60)  # the writer is inside fdatasync now
        ticks_before = ticks
        async with asyncio.timeout(60):
            while ticks < ticks_before + 3:  # the loop runs while the writer is stuck on the disk
                await asyncio.sleep(0.001)
        disk_open.set()
        await session.synced()
    stop.set()
    await task
    assert path.read_bytes().count(b"\n") == 50 and synced_sizes[-1] == path.stat().st_size
    assert session.events_seen == 50


async def test_state_changes_are_told_in_order_after_they_are_durable(tmp_path: Path, synced_sizes: list[int]) -> None:
    path = tmp_path / "events.jsonl"
    session = Session(SID, EventLog(path, SID, redact_obj=lambda p: p))
    told: list[tuple[str, int]] = []
    session.machine.listener = lambda a, b, reason: session.when_durable(
        lambda: told.append((b, path.read_bytes().count(b'"to_state":"' + b.encode() + b'"')))
    )
    with deferred_appends():
        for state in ("Planning", "Paused", "ExecutingStep", "AwaitingApproval"):
            session.machine.to(state, "test")
        await session.synced()
    await asyncio.sleep(0.01)
    assert [s for s, _ in told] == ["Planning", "Paused", "ExecutingStep", "AwaitingApproval"]
    assert all(count == 1 for _, count in told), "told before the event was on disk"
