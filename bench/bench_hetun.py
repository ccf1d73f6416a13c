"""Hetun research fan-out and the helper sandbox's start-up cost.

1. Research phase with 32 sub-queries against the fake DeepSeek server, every
   sub-query answered after a fixed latency (`--latency`, default 0.2 s): wall
   time of the whole Hetun planning request (research + planner) at
   `hetun.parallelism = 8` vs 1 (sequential), measured in the same run.
   Goal: >= 5x faster at parallelism 8.
2. The helper block's process: wall time of `run_block("result(1)")` (AST check,
   bubblewrap, `python -I -S` child, one protocol round trip) vs starting a
   bare `python -I -S -c pass` (the baseline, same run).

    .venv/bin/python bench/bench_hetun.py [--latency 0.2] [--runs 3] [--smoke]

`--smoke`: one run of 4 sub-queries at 10 ms latency and 3 helper starts; the speed-up goal is
not judged.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import add_smoke_option, pct, report, smoke_sizes

from deepseek_ls.agent import Agent
from deepseek_ls.agent.hetun.runner import run_block
from deepseek_ls.config_models import Config, HetunHelperConfig
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.ui_port import AutoApproveUI

SLICES = 32  # sub-queries (--slices)
RESEARCH_MS: list[float] = []


def _time_research() -> None:
    """Time `Researcher.run` itself (the phase the goal is about), besides the whole request."""
    from deepseek_ls.agent.hetun.research import Researcher

    original = Researcher.run

    async def timed(self, request):
        started = time.perf_counter()
        try:
            return await original(self, request)
        finally:
            RESEARCH_MS.append((time.perf_counter() - started) * 1000)

    Researcher.run = timed
PLAN = '```json\n{"goal": "bench", "steps": [{"title": "noop", "intent": "edit", "files": ["mod_0.py"]}], ' \
       '"verification": [], "confidence": 0.9}\n```'


def script(latency: float, count: int) -> list[dict]:
    slices = "\n".join(f"SLICE|mod_{i}.py" for i in range(count))
    return [
        {"match": {"role": "hetun.coordinator"}, "repeat": True, "content": slices},
        {"match": {"role": "hetun.sub"}, "repeat": True, "content": "FINDING|0.5|something",
         "fault": {"delay_before_first_byte": latency}},
        {"match": {"role": "planner"}, "repeat": True, "content": PLAN},
    ]


async def research_once(root: Path, base_url: str, parallelism: int, count: int) -> tuple[float, float, int]:
    cfg = Config()
    cfg.index.enabled = False
    cfg.llm.base_url = base_url
    cfg.hetun.parallelism = parallelism
    cfg.hetun.max_slices = count
    cfg.hetun.max_subqueries = count + 1  # the coordinator and the sub-queries
    cfg.hetun.max_depth = 0
    cfg.hetun.cross_check = 0
    agent = Agent(root, cfg, llm=LLMClient(cfg.llm), ui=AutoApproveUI())
    try:
        started = time.perf_counter()
        sid, _ = await agent.plan("bench the fan-out", mode="hetun")
        elapsed = time.perf_counter() - started
    finally:
        await agent.llm.aclose()
    subs = sum(1 for n in agent.session_view(sid)["hetun"]["research"]["nodes"] if n["kind"] == "slice")
    return RESEARCH_MS[-1], elapsed * 1000, subs


class _Host:
    async def serve(self, name, args, kwargs):
        return None


async def helper_startup(root: Path, runs: int) -> tuple[list[float], list[float], str]:
    """`runs` helper block starts (sandboxed when the sandbox works here) and as many bare interpreters."""
    box = Sandbox(root)
    status = box.status()
    cfg = HetunHelperConfig(require_sandbox=status.available)
    ours, base = [], []
    for _ in range(runs):
        started = time.perf_counter()
        result = await run_block("result(1)", _Host(), cfg, sandbox=box if status.available else None)
        ours.append((time.perf_counter() - started) * 1000)
        assert result.ok and result.result == 1, result.error
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        base.append((time.perf_counter() - started) * 1000)
    return ours, base, status.describe()


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each sub-query's answer")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slices", type=int, default=SLICES, help="sub-queries of the research phase")
    parser.add_argument("--helper-runs", type=int, default=None, help="helper block starts (default: 4 x runs, at least 10)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke = smoke_sizes(args, latency=0.01, runs=1, slices=4, helper_runs=3)
    os.environ.setdefault("DEEPSEEK_API_KEY", "bench-key")
    fake = FakeDeepSeek(script(args.latency, args.slices)).start()
    os.environ["DEEPSEEK_BASE_URL"] = fake.base_url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for i in range(args.slices):
                (root / f"mod_{i}.py").write_text(f"def f_{i}(x):\n    return x + {i}\n")
            _time_research()
            fan, seq, fan_all, seq_all = [], [], [], []
            for _ in range(args.runs):
                ms, whole, subs = await research_once(root, fake.base_url, 8, args.slices)
                fan.append(ms)
                fan_all.append(whole)
                ms2, whole2, subs2 = await research_once(root, fake.base_url, 1, args.slices)
                seq.append(ms2)
                seq_all.append(whole2)
                if subs != args.slices or subs2 != args.slices:
                    print(f"expected {args.slices} sub-queries, got {subs} / {subs2}", file=sys.stderr)
                    return 1
            print(f"research phase: {args.slices} sub-queries, {args.latency:g}s latency each, {args.runs} runs")
            report("research phase, parallelism 8", fan, seq, "parallelism 1")
            report("whole request (+ planner), par. 8", fan_all, seq_all, "parallelism 1")
            speedup = statistics.median(seq) / statistics.median(fan)
            print(f"research phase speed-up at parallelism 8: {speedup:.2f}x (goal >= 5x); whole request "
                  f"{statistics.median(seq_all) / statistics.median(fan_all):.2f}x")
            ours, base, how = await helper_startup(root, args.helper_runs or max(args.runs * 4, 10))
            print(f"helper sandbox ({how}):")
            report("helper block start + result(1)", ours, base, "python -I -S -c pass")
            print(f"helper start-up overhead over a bare interpreter: median "
                  f"{statistics.median(ours) - statistics.median(base):.1f} ms, p95 {pct(ours, 0.95):.1f} ms total")
    finally:
        fake.stop()
    return 0 if smoke or speedup >= 5 else 2


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
