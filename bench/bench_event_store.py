"""Event store figures: append latency, sustained rate, the server loop while the agent
logs, projection rebuild time.

    .venv/bin/python bench/bench_event_store.py [--appends 2000] [--events 100000] [--rebuild-only] [--smoke]

Baselines measured in the same run, on the same disk:
- append: a bare `os.write` + `os.fdatasync` of the same bytes (the durability floor);
- rebuild: `json.loads` of every line of the same log (the parsing floor).
- loop while logging: the same request latency with no events being written.
Targets (issue 2): median append < 1 ms, p95 < 5 ms; rebuild of 100,000 events < 3 s.
Target (issue 31): the rebuild (its seal and chain check included, as in a fresh process) <= 2x the
json.loads baseline.
Target (issue 17): request p95 unchanged while the agent writes events at full rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from deepseek_ls.agent.session import Session, deferred_appends
from deepseek_ls.store.log import EventLog
from deepseek_ls.store.projections import Projections
from deepseek_ls.store.sessions import SessionStore

from benchstats import add_smoke_option, pct, smoke_sizes

TURN = {"role": "assistant", "content": "I will rename foo to bar in a.py and update the tests. " * 4}


def bench_append(root: Path, n: int) -> None:
    """Our append, our append without redaction, and a bare write+fdatasync, interleaved so
    all three see the same disk and CPU contention."""
    line = (json.dumps({"seq_no": 1, "ts": "2026-01-01T00:00:00.000000Z", "session_id": "bench",
                        "kind": "TurnAdded@v1", "payload": TURN}, separators=(",", ":")) + "\n").encode()
    ours, unredacted, raw = [], [], []
    fd = os.open(root / "raw.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    with EventLog(root / "a" / "events.jsonl", "bench") as log, \
            EventLog(root / "b" / "events.jsonl", "bench", redact_obj=lambda o: o) as plain:
        log.append("TurnAdded@v1", TURN)  # warm-up
        plain.append("TurnAdded@v1", TURN)
        for _ in range(n):
            t = time.perf_counter()
            log.append("TurnAdded@v1", TURN)
            ours.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            plain.append("TurnAdded@v1", TURN)
            unredacted.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            os.write(fd, line)
            os.fdatasync(fd)
            raw.append((time.perf_counter() - t) * 1000)
        # Sustained: the same appends back to back, nothing in between.
        start = time.perf_counter()
        for _ in range(n):
            log.append("TurnAdded@v1", TURN)
        rate = n / (time.perf_counter() - start)
    os.close(fd)

    med, p95 = statistics.median(ours), pct(ours, 0.95)
    raw_med, raw_p95 = statistics.median(raw), pct(raw, 0.95)
    print(f"append (durable, {n} events, {len(line)} B lines)")
    print(f"  EventLog.append     median {med:.3f} ms   p95 {p95:.3f} ms   "
          f"[target < 1 ms / < 5 ms: {'ok' if med < 1 and p95 < 5 else 'MISSED'}]")
    print(f"  ... without redaction median {statistics.median(unredacted):.3f} ms   "
          f"p95 {pct(unredacted, 0.95):.3f} ms   (policy.redact costs the difference)")
    print(f"  write+fdatasync     median {raw_med:.3f} ms   p95 {raw_p95:.3f} ms   (baseline)")
    print(f"  ratio vs baseline   median {med / raw_med:.2f}x   p95 {p95 / raw_p95:.2f}x")
    if raw_med >= 1:
        print("  note: a bare fdatasync alone takes over 1 ms here: the disk is busy; compare the ratio")
    print(f"  sustained           {rate:,.0f} events/s ({n} back-to-back appends, one writer, "
          f"fdatasync each)")
    # The CPU path alone (no fdatasync): where the chain's HMAC per line (store/chain.py) shows.
    cpu, bare = [], []
    fd = os.open(root / "raw-nosync.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    with EventLog(root / "c" / "events.jsonl", "bench", durable=False, redact_obj=lambda o: o) as fast:
        fast.append("TurnAdded@v1", TURN)
        for _ in range(n):
            t = time.perf_counter()
            fast.append("TurnAdded@v1", TURN)
            cpu.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            os.write(fd, line)
            bare.append((time.perf_counter() - t) * 1000)
    os.close(fd)
    print(f"  no fdatasync, no redaction: EventLog.append median {statistics.median(cpu):.3f} ms   "
          f"bare os.write median {statistics.median(bare):.3f} ms   (the CPU path: validation, envelope, mac, writer thread)")


async def _requests_while(root: Path, mode: str, n: int) -> tuple[list[float], int]:
    """Latency of `n` requests delivered to the event loop from another thread (as pygls'
    reader thread hands the server each message), while an agent task on the same loop
    emits events back to back, yielding between events as the agent's code does: `idle`
    (no events), `inline` (each append waits for its fdatasync on the loop, as before the
    writer thread) or `writer` (queued to the group-commit writer, awaited every 20
    events as `Agent._driving` does at the end of each request)."""
    loop = asyncio.get_running_loop()
    session = Session("bench", EventLog(root / mode / "events.jsonl", "bench"))
    stop = asyncio.Event()
    written = 0

    async def agent() -> None:
        nonlocal written
        while not stop.is_set():
            if mode == "idle":
                await asyncio.sleep(0.005)
                continue
            if mode == "writer":
                with deferred_appends():
                    for _ in range(20):
                        session.emit("TurnAdded@v1", TURN)
                        written += 1
                        await asyncio.sleep(0)
                    await session.synced()
            else:
                session.emit("TurnAdded@v1", TURN)
                written += 1
                await asyncio.sleep(0)

    latencies: list[float] = []
    done = asyncio.Event()

    def client() -> None:
        for _ in range(n):
            sent = time.perf_counter()
            answered = threading.Event()

            def handle(sent: float = sent, answered: threading.Event = answered) -> None:
                latencies.append((time.perf_counter() - sent) * 1000)
                answered.set()

            loop.call_soon_threadsafe(handle)
            answered.wait()
            time.sleep(0.002)
        loop.call_soon_threadsafe(done.set)

    task = asyncio.create_task(agent())
    threading.Thread(target=client, daemon=True).start()
    await done.wait()
    stop.set()
    await task
    session.log.close()
    return latencies, written


def bench_loop_while_logging(root: Path, n: int) -> None:
    results: dict[str, list[float]] = {"idle": [], "inline": [], "writer": []}
    written = {"inline": 0, "writer": 0}
    elapsed = {"inline": 0.0, "writer": 0.0}
    for _ in range(5):  # interleaved rounds: all three see the same disk and CPU contention
        for mode in results:
            t = time.perf_counter()
            lat, count = asyncio.run(_requests_while(root, mode, n // 5))
            results[mode] += lat
            if mode in written:
                written[mode] += count
                elapsed[mode] += time.perf_counter() - t
    idle = results["idle"]
    print(f"server loop: request latency while the agent logs at full rate ({n} requests each)")
    print(f"  no events (baseline)     median {statistics.median(idle):.3f} ms   p95 {pct(idle, 0.95):.3f} ms")
    for mode, label in (("inline", "append on the loop (before)"), ("writer", "writer thread (now)")):
        lat = results[mode]
        print(f"  {label:<24} median {statistics.median(lat):.3f} ms   p95 {pct(lat, 0.95):.3f} ms   "
              f"p95 ratio {pct(lat, 0.95) / pct(idle, 0.95):.2f}x   "
              f"{written[mode] / elapsed[mode]:,.0f} events/s written meanwhile")


def session_events(i: int) -> list[tuple[str, dict]]:
    """One plan-step cycle: about what an executor step records."""
    step = f"s{i % 7}"
    return [
        ("TurnAdded@v1", {"role": "user", "content": f"step {i}"}),
        ("RouterDecision@v1", {"decision_id": f"d{i}", "unit": f"executor:{step}", "role": "executor",
                               "features": {"prompt_complexity": 0.4, "repo_breadth": 0.2},
                               "weights": {"prompt_complexity": 0.2, "repo_breadth": 0.24},
                               "contributions": {"prompt_complexity": 0.08, "repo_breadth": 0.048},
                               "score": 0.128, "threshold": 0.72, "reason_codes": [], "profile": "fast",
                               "model": "deepseek-chat"}),
        ("LLMCall@v1", {"call_id": f"c{i}", "role": "executor", "profile": "fast", "model": "deepseek-chat",
                        "request_hash": "h", "usage": {"total_tokens": 900}, "ttft_ms": 180.0}),
        ("ToolProposed@v1", {"call_id": f"t{i}", "tool": "fs.read", "arguments": {"path": f"src/m{i % 50}.py"}}),
        ("ToolResult@v1", {"call_id": f"t{i}", "tool": "fs.read", "ok": True, "value": {"bytes": 1200}}),
        ("TurnAdded@v1", TURN),
        ("PatchStaged@v1", {"patch_id": f"p{i}", "files": ["a.py"], "hunks": [
            {"hunk_id": f"p{i}-h1", "file": "a.py"}, {"hunk_id": f"p{i}-h2", "file": "a.py"}]}),
        ("PatchApplied@v1", {"patch_id": f"p{i}", "hunk_ids": [f"p{i}-h1"], "files": ["a.py"]}),
        ("VerificationRun@v1", {"command": "pytest", "exit_code": 0, "ok": True}),
        ("StepMarked@v1", {"plan_id": "plan", "step_id": step, "status": "done"}),
    ]


def bench_rebuild(root: Path, total: int, rounds: int = 3) -> None:
    state = root / "rebuild" / ".deepseek"
    store = SessionStore(state, durable=False)
    plan = {"plan_id": "plan", "version": 1, "goal": "bench",
            "steps": [{"step_id": f"s{k}", "title": f"step {k}"} for k in range(7)]}
    with store.create("/ws", "agent", "bench") as log:
        log.append("PlanCreated@v1", {"plan": plan})
        written, i = 2, 0
        while written < total:
            for kind, payload in session_events(i):
                if written >= total:
                    break
                log.append(kind, payload)
                written += 1
            i += 1
        path = log.path
    size_mb = path.stat().st_size / 1e6

    from deepseek_ls.store import provenance

    def parse() -> None:
        with open(path, "rb") as fh:
            for line in fh:
                json.loads(line)

    def rebuild() -> None:
        provenance._verdicts.clear()  # as in a fresh process: the rebuild checks the log's seal and chain
        with Projections(state) as projections:
            projections.rebuild()

    def seal_check() -> tuple[float, float]:
        provenance._verdicts.clear()
        t, c = time.perf_counter(), time.process_time()
        assert provenance.why_not_ours(path.parent, path.parent.name) is None
        return time.perf_counter() - t, time.process_time() - c

    # The first check of a log reads every line's mac and records how far the chain held
    # (`session.checked`); every process after it hashes that prefix once and checks what was
    # appended since. The rounds below are such later processes; this is the first.
    (path.parent / provenance.CHECKED_NAME).unlink(missing_ok=True)
    first_s, first_cpu = seal_check()

    # Rounds in turn (baseline, ours, ...) so both see the same load; medians of wall and CPU.
    parse_wall, parse_cpu, rebuild_wall, rebuild_cpu = [], [], [], []
    for _ in range(rounds):
        for run, wall, cpu in ((parse, parse_wall, parse_cpu), (rebuild, rebuild_wall, rebuild_cpu)):
            t, c = time.perf_counter(), time.process_time()
            run()
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    with Projections(state) as projections:
        count = projections.sessions()[0]["event_count"]
    assert count == total, (count, total)
    parse_s, rebuild_s = statistics.median(parse_wall), statistics.median(rebuild_wall)
    ratio, cpu_ratio = rebuild_s / parse_s, statistics.median(rebuild_cpu) / statistics.median(parse_cpu)
    print(f"rebuild projections from one {total:,}-event log ({size_mb:.1f} MB; median of {rounds} rounds in turn "
          f"with the baseline; load {os.getloadavg()[0]:.1f})")
    print(f"  Projections.rebuild {rebuild_s:.2f} s wall, {statistics.median(rebuild_cpu):.2f} s CPU   "
          f"[target < 3 s: {'ok' if rebuild_s < 3 else 'MISSED'} (wall)]   (seal and chain check included)")
    print(f"  json.loads of lines {parse_s:.2f} s wall, {statistics.median(parse_cpu):.2f} s CPU   (baseline)")
    print(f"  ratio vs baseline   {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU   [target <= 2x: "
          f"{'ok' if ratio <= 2 else 'MISSED'}]   ({total / rebuild_s:,.0f} events/s)")
    print(f"  best of {rounds}         {min(rebuild_wall) / min(parse_wall):.2f}x wall, "
          f"{min(rebuild_cpu) / min(parse_cpu):.2f}x CPU   (each side's fastest round: the least disturbed by load)")
    verify_s, verify_cpu = seal_check()
    print(f"  seal and chain check {verify_s:.2f} s wall, {verify_cpu:.2f} s CPU   (in a rebuild, listing, replay, "
          f"resume: once per process and log change)   ratio vs json.loads {verify_s / parse_s:.2f}x")
    print(f"  its first check      {first_s:.2f} s wall, {first_cpu:.2f} s CPU   (every line's mac, once per log: later "
          f"processes start from session.checked)   ratio vs json.loads {first_s / parse_s:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument(
        "--dir", type=Path, default=Path.cwd(),
        help="parent of the scratch dir (default: the cwd, i.e. the disk a workspace's .deepseek/ is on)",
    )
    parser.add_argument("--rebuild-only", action="store_true", help="measure the projection rebuild only")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rebuild rounds, each in turn with the json.loads baseline (more: steadier on a busy machine)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, appends=50, events=500, requests=20)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        os.environ["XDG_CONFIG_HOME"] = str(root / "xdg-config")  # the seal key: never the real ~/.config
        load = os.getloadavg()[0]
        print(f"# deepseek-ls event store bench ({sys.platform}, {os.cpu_count()} CPUs, "
              f"load {load:.1f}, dir {root})")
        if not args.rebuild_only:
            bench_append(root, args.appends)
            bench_loop_while_logging(root, args.requests)
        bench_rebuild(root, args.events, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
