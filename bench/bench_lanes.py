"""Teammate lanes: wall time of a 4-step plan with 1 lane vs 4 lanes, and the cost of a lane's worktree.

A plan of 4 independent steps (one file each) runs against the fake DeepSeek server,
every executor call answering after a fixed latency (`--latency`, default 2.0 s: a short real executor call), with
every approval answered yes and teammate mode on: once with `agent_loop.max_lanes = 1`
(the lanes run one after the other) and once with 4. Baseline, measured in the same
run: the same plan without teammate mode (the ordinary sequential loop). Goal: 4
lanes at least 2.5x faster than 1 lane.

Then the added cost per lane: creating (worktree + copying the workspace's
uncommitted state + base commit) and removing a lane worktree on a repository of
~2,000 files (`--files`), against a plain `git worktree add` / `remove` of the same
repository.

    .venv/bin/python bench/bench_lanes.py [--runs 3] [--latency 1.0] [--files 2000] [--smoke]

`--smoke`: one run of each at 10 ms per call, one lane worktree of 50 files; the goal is not judged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import add_smoke_option, pct, report, smoke_sizes

from deepseek_ls.agent.assemble import build_agent
from deepseek_ls.agent.lanes import worktree as wt
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.ui_port import AutoApproveUI

STEPS = 4


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True,
                   capture_output=True)


def make_repo(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"pkg{i % 40}"
        sub.mkdir(exist_ok=True)
        (sub / f"mod_{i}.py").write_text("".join(f"def f_{i}_{k}(x):\n    return x + {k}\n\n" for k in range(8)))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def script(latency: float) -> list[dict]:
    steps = [{"title": f"Change step {s}", "intent": "edit", "files": [f"pkg{s}/mod_{s}.py"]} for s in range(STEPS)]
    plan = {"goal": "bench", "steps": steps, "verification": ["git status"], "confidence": 0.9}
    replies = [{"match": {"role": "planner"}, "content": "```json\n" + json.dumps(plan) + "\n```", "repeat": True}]
    for s in range(STEPS):
        diff = (f"--- a/pkg{s}/mod_{s}.py\n+++ b/pkg{s}/mod_{s}.py\n@@ -2,1 +2,1 @@\n"
                f"-    return x + 0\n+    return x * {s + 2}\n")
        replies.append({"match": {"role": "executor", "contains": f"Step: Change step {s}\n"}, "repeat": True,
                        "content": "```diff\n" + diff + "```", "fault": {"delay_before_first_byte": latency}})
    return replies


async def one_run(base_url: str, files: int, *, teammate: bool, lanes: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root, files)
        cfg = Config()
        cfg.index.enabled = False
        cfg.llm.max_retries = 0
        cfg.agent_loop.teammate_mode = teammate
        cfg.agent_loop.max_lanes = lanes
        agent = build_agent(root, cfg, llm=LLMClient(cfg.llm), ui=AutoApproveUI(), index=None)
        try:
            started = time.perf_counter()
            view = await agent.run("Change the four functions")  # every approval answered yes
            wall = time.perf_counter() - started
        finally:
            await agent.llm.aclose()
        if view["state"] != "Completed":
            raise SystemExit(f"bench run did not complete: {view['state']} {view['state_reason']}")
        kinds = [e.kind for e in agent.store.open(view["session_id"]).read()]
        if teammate and kinds.count("LaneCompleted@v1") != STEPS:
            raise SystemExit(f"expected {STEPS} lanes, saw {kinds.count('LaneCompleted@v1')}")
        return wall * 1000


def worktree_cost(files: int, runs: int) -> None:
    ours, plain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root, files)
        (root / "pkg0" / "mod_0.py").write_text("dirty = True\n")  # some uncommitted state to copy
        (root / "untracked.py").write_text("x = 1\n")
        for n in range(runs):
            started = time.perf_counter()
            tree = wt.create(root, root / ".deepseek", f"bench-{n}", f"lane/bench/{n}", buffers={"open.py": "y = 2\n"},
                             deny_paths=[])
            wt.remove(tree)
            ours.append((time.perf_counter() - started) * 1000)
            path = Path(tmp) / f"plain-{n}"
            started = time.perf_counter()
            git(root, "worktree", "add", "-q", "-b", f"plain/{n}", str(path), "HEAD")
            git(root, "worktree", "remove", "--force", str(path))
            git(root, "branch", "-D", f"plain/{n}")
            plain.append((time.perf_counter() - started) * 1000)
    report(f"lane worktree create+remove ({files} files)", ours, plain, "plain git worktree")


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per executor call")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--worktree-runs", type=int, default=None, help="lane worktrees made (default: runs, at least 5)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke = smoke_sizes(args, runs=1, latency=0.01, files=50, worktree_runs=1)
    fake = FakeDeepSeek(script(args.latency)).start()
    os.environ.setdefault("DEEPSEEK_API_KEY", "bench-key")
    os.environ["DEEPSEEK_BASE_URL"] = fake.base_url
    try:
        figures: dict[str, list[float]] = {"sequential": [], "1 lane": [], "4 lanes": []}
        for _ in range(args.runs):
            figures["sequential"].append(await one_run(fake.base_url, 50, teammate=False, lanes=1))
            figures["1 lane"].append(await one_run(fake.base_url, 50, teammate=True, lanes=1))
            figures["4 lanes"].append(await one_run(fake.base_url, 50, teammate=True, lanes=4))
    finally:
        fake.stop()
    print(f"{STEPS} independent steps, {args.latency:g}s per executor call, {args.runs} runs each (wall, ms)")
    for name, samples in figures.items():
        print(f"  {name:<11} median {statistics.median(samples):8.0f}  p95 {pct(samples, 0.95):8.0f}")
    report("4 lanes vs 1 lane", figures["4 lanes"], figures["1 lane"], "1 lane")
    report("4 lanes vs sequential (no lanes)", figures["4 lanes"], figures["sequential"], "sequential")
    speedup = statistics.median(figures["1 lane"]) / statistics.median(figures["4 lanes"])
    print(f"speed-up 4 lanes over 1 lane: {speedup:.2f}x (goal >= 2.5x)")
    worktree_cost(args.files, args.worktree_runs or max(args.runs, 5))
    return 0 if smoke or speedup >= 2.5 else 2


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
