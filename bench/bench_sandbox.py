"""The OS sandbox's added cost per command (goal: <= 30 ms median).

    .venv/bin/python bench/bench_sandbox.py [--rounds 40] [--files 3000] [--smoke]

Runs `true` and `python -c pass` through `tools.shell.run_command` (the path every command the
agent starts takes: bounded wait, capped output) with the bubblewrap sandbox and without it,
interleaved in the same run, in a workspace of `--files` files (the sandbox walks it to mask
secret files, so the walk is part of the cost). Also times the sandbox's own argv construction
(walk + masks) alone. Prints median and p95 in ms, the ratio, and the added cost of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import shell

from benchstats import add_smoke_option, pct, report, smoke_sizes


def make_workspace(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"pkg{i // 100}" / f"mod{i // 20}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.py").write_text(f"x = {i}\n")
    (root / ".env").write_text("SECRET=1\n")
    (root / "pkg0" / "server.pem").write_text("key\n")
    (root / ".git").mkdir()


async def timed(argv: list[str], root: Path, sandbox: Sandbox | None) -> float:
    start = time.perf_counter()
    result = await shell.run_command(argv, cwd=root, timeout=60, max_output_bytes=64_000, sandbox=sandbox)
    elapsed = (time.perf_counter() - start) * 1000
    if result.exit_code != 0:
        raise SystemExit(f"{argv} failed: {result.stderr}")
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--files", type=int, default=3000)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, rounds=1, files=50)
    with tempfile.TemporaryDirectory(prefix="dsls-bench-sandbox-") as tmp:
        root = Path(tmp)
        make_workspace(root, args.files)
        sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths)
        status = sandbox.status()
        if not status.available:
            raise SystemExit(f"no sandbox to measure: {status.reason}")
        print(f"workspace: {args.files} files; {args.rounds} rounds; {status.describe()}")
        for argv, name in ((["true"], "true"), ([sys.executable, "-c", "pass"], "python -c pass")):
            ours: list[float] = []
            base: list[float] = []
            for _ in range(3):  # warm caches on both sides
                await timed(argv, root, sandbox)
                await timed(argv, root, None)
            for _ in range(args.rounds):
                ours.append(await timed(argv, root, sandbox))
                base.append(await timed(argv, root, None))
            report(f"sandboxed {name}", ours, base, "unsandboxed")
            added = [o - b for o, b in zip(ours, base)]
            print(f"{'  added per command':<34} median {statistics.median(ours) - statistics.median(base):8.2f} ms  "
                  f"p95 of paired differences {pct(added, 0.95):8.2f} ms")
        # What bubblewrap itself costs (no asyncio, no output handling): the floor for the lines above.
        bare_b, bare_p = [], []
        wrapped = sandbox.wrap(["true"])
        for _ in range(args.rounds):
            start = time.perf_counter()
            subprocess.run(wrapped, check=True, timeout=60)
            bare_b.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            subprocess.run(["true"], check=True, timeout=60)
            bare_p.append((time.perf_counter() - start) * 1000)
        report("bare bwrap true (subprocess.run)", bare_b, bare_p, "bare true")
        wraps = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            sandbox.wrap(["true"])
            wraps.append((time.perf_counter() - start) * 1000)
        print(f"{'argv + secret-mask walk alone':<34} median {statistics.median(wraps):8.2f} ms  p95 {pct(wraps, 0.95):8.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
