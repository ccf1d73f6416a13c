"""Durability under SIGKILL and two processes appending to one session at once."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deepseek_ls.store.log import EventLog

CHILD = str(Path(__file__).with_name("_appender_child.py"))
SID = "01900000-0000-7000-8000-0000000000aa"


def spawn(log_path: Path, tag: str, count: int, go: Path | None = None, big_every: int = 0, tear_after: int = 0):
    return subprocess.Popen(
        [sys.executable, CHILD, str(log_path), SID, tag, str(count), str(go) if go else "-", str(big_every),
         str(tear_after)],
        stdout=subprocess.PIPE,
        text=True,
    )


def well_formed(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), "log must end with a complete line"
    return [json.loads(line) for line in raw.splitlines()]


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_acknowledged_event(tmp_path):
    log_path = tmp_path / "events.jsonl"
    rng = random.Random(20261122)
    acknowledged: set[int] = set()
    trials = 30
    torn_on_purpose = 0
    for trial in range(trials):
        # Every fifth child tears its own last line; the others die wherever the kill lands.
        tear_after = rng.randint(1, 5) if trial % 5 == 4 else 0
        torn_on_purpose += bool(tear_after)
        child = spawn(log_path, "crash", 0, big_every=rng.choice([0, 2, 3]), tear_after=tear_after)
        acks: list[str] = []
        first = threading.Event()

        def read(stream=child.stdout, acks=acks, first=first) -> None:
            for line in stream:
                if line.endswith("\n"):
                    acks.append(line)
                    first.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert first.wait(30), "the child never acknowledged an append"
        if not tear_after:
            time.sleep(rng.uniform(0.0, 0.12))
            os.kill(child.pid, signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
        reader.join()
        acknowledged.update(int(line.split()[0]) for line in acks)

        # Reopen as the next run would: repairs a torn tail, keeps every acknowledged event.
        with EventLog(log_path, SID) as log:
            seqs = [e.seq_no for e in log.read()]
        assert seqs == list(range(1, len(seqs) + 1)), "seq_no must stay contiguous"
        assert acknowledged <= set(seqs), f"lost acknowledged events: {sorted(acknowledged - set(seqs))[:5]}"
        assert len(well_formed(log_path)) == len(seqs)
    torn = list(tmp_path.glob("events.jsonl.torn-*"))
    assert len(torn) >= torn_on_purpose
    print(f"{trials} kills, {len(acknowledged)} acknowledged events kept, {len(torn)} torn tails cut "
          f"({torn_on_purpose} made on purpose)")


@pytest.mark.slow
def test_two_processes_appending_at_once_never_interleave_or_reuse_seq_no(tmp_path):
    log_path = tmp_path / "events.jsonl"
    go = tmp_path / "go"
    per_writer = 300
    writers = [spawn(log_path, tag, per_writer, go=go) for tag in ("A", "B")]
    for writer in writers:
        assert writer.stdout.readline().strip() == "ready"
    go.touch()
    outputs = [writer.communicate(timeout=120)[0] for writer in writers]
    assert [w.returncode for w in writers] == [0, 0]

    records = well_formed(log_path)
    assert [r["seq_no"] for r in records] == list(range(1, 2 * per_writer + 1))
    contents = [r["payload"]["content"] for r in records]
    for tag, output in zip(("A", "B"), outputs):
        mine = [c for c in contents if c.startswith(f"{tag}-")]
        assert mine == [f"{tag}-{i}" for i in range(1, per_writer + 1)], "each writer's order is kept"
        acked = {int(line.split()[0]): line.split()[1] for line in output.splitlines()}
        assert all(records[seq - 1]["payload"]["content"] == text for seq, text in acked.items())
    # The writers really overlapped: their events alternate somewhere in the log.
    switches = sum(1 for a, b in zip(contents, contents[1:]) if a[0] != b[0])
    assert switches > 1
