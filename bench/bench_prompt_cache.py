"""Prompt-cache hit ratio of a 10-turn agent session, against the fake DeepSeek server.

One `run` whose plan has 9 steps: 1 planner call + 9 executor calls = 10 turns.
The fake server reports `prompt_cache_hit_tokens` as DeepSeek does (longest
common prefix with earlier prompts). Target: at least 80% of prompt tokens hit,
which needs a stable prefix (tools, system prompt, repo map, plan) with the
volatile parts (files, step, feedback) last.

Baseline, measured in the same run: the very same messages in the naive order
(volatile parts first), scored by the same cache model.

The session runs in yolo mode, which needs a trusted workspace: the bench trusts its
temporary workspace as a person would (`deepseek-ls trust` in it), as a user of its own
(a temporary XDG_CONFIG_HOME: neither the trust list nor the seal key of the real one).
`--smoke` runs the same session (it takes seconds) and still judges the target: the hit
ratio does not depend on the machine.

    .venv/bin/python bench/bench_prompt_cache.py [--smoke]
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
from pathlib import Path

from benchstats import add_smoke_option, smoke_sizes

from deepseek_ls.agent import Agent
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.testkit.responses import PromptCache
from deepseek_ls.testkit.script import Reply
from deepseek_ls.ui_port import AutoApproveUI

FILES = 3
STEPS = 9


def make_workspace(root: Path) -> None:
    for f in range(FILES):
        body = "\n\n".join(f"def func_{f}_{i}(x):\n    return x + {i}\n" for i in range(STEPS))
        (root / f"mod_{f}.py").write_text(body)


def script() -> list[dict]:
    steps = [{"title": f"Change func_{s % FILES}_{s}", "intent": "edit", "files": [f"mod_{s % FILES}.py"]} for s in range(STEPS)]
    plan = {"goal": "bench", "steps": steps, "verification": [], "confidence": 0.9}
    replies = [{"match": {"role": "planner"}, "content": "```json\n" + json.dumps(plan) + "\n```"}]
    for s in range(STEPS):
        f = s % FILES
        line = 3 * s + 2  # "    return x + s" of func_f_s
        diff = (f"--- a/mod_{f}.py\n+++ b/mod_{f}.py\n@@ -{line},1 +{line},1 @@\n"
                f"-    return x + {s}\n+    return x * {s}\n")
        replies.append({"match": {"role": "executor", "contains": f"Step: Change func_{f}_{s}\n"}, "content": "```diff\n" + diff + "```"})
    return replies


def naive_order(body: dict) -> dict:
    """Volatile first: the last user messages (files, step) before the stable ones."""
    messages = body["messages"]
    system, rest = messages[:1], messages[1:]
    return {**body, "messages": list(reversed(rest)) + system}


def trust(root: Path) -> None:
    """`deepseek-ls trust` in `root`, as the person would before a yolo session."""
    subprocess.run([sys.executable, "-m", "deepseek_ls", "trust", "--workspace", str(root)], check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=120)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_smoke_option(parser)
    smoke_sizes(parser.parse_args())
    fake = FakeDeepSeek(script()).start()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg-config")  # the bench's own user
        os.environ.pop("DEEPSEEK_LS_USER_CONFIG", None)
        make_workspace(root)
        trust(root)
        cfg = Config()
        cfg.index.enabled = False
        cfg.llm.base_url = fake.base_url
        os.environ.setdefault("DEEPSEEK_API_KEY", "bench-key")
        os.environ["DEEPSEEK_BASE_URL"] = fake.base_url
        agent = Agent(root, cfg, llm=LLMClient(cfg.llm), ui=AutoApproveUI())
        try:
            view = await agent.run("Change every function as planned", mode="yolo")
        finally:
            await agent.llm.aclose()
            fake.stop()
        events = agent.store.open(view["session_id"]).read()
    calls = [e.payload for e in events if e.kind == "LLMCall@v1"]
    if view["state"] != "Completed" or len(calls) != 1 + STEPS:
        print(f"bench session did not complete as scripted: {view['state']} {view['last_error']}", file=sys.stderr)
        return 1
    prompt = [c["usage"]["prompt_tokens"] for c in calls]
    hit = [c["usage"]["prompt_cache_hit_tokens"] for c in calls]
    cache = PromptCache()
    base_hit = [cache.usage(naive_order(r.body), Reply())["prompt_cache_hit_tokens"] for r in fake.requests]

    print(f"{'turn':>4} {'role':<9} {'prompt_tok':>10} {'hit_tok':>8} {'hit%':>6} {'naive_hit%':>10}")
    for i, (c, p, h, b) in enumerate(zip(calls, prompt, hit, base_hit), start=1):
        print(f"{i:>4} {c['role']:<9} {p:>10} {h:>8} {100 * h / p:>5.1f}% {100 * b / p:>9.1f}%")
    ratio = sum(hit) / sum(prompt)
    base = sum(base_hit) / sum(prompt)
    p95 = sorted(prompt)[max(0, int(round(0.95 * len(prompt))) - 1)]
    print(f"prompt tokens per turn: median {statistics.median(prompt):.0f}, p95 {p95}, total {sum(prompt)}")
    print(f"cache hit ratio: {100 * ratio:.1f}% of prompt tokens (target >= 80%)")
    print(f"naive-order baseline (same messages, volatile first): {100 * base:.1f}%; ratio vs baseline {ratio / base if base else float('inf'):.2f}x")
    print(f"billed-equivalent prompt tokens (hit at 1/10 price): {sum(prompt) - 0.9 * sum(hit):.0f} vs {sum(prompt) - 0.9 * sum(base_hit):.0f} naive")
    return 0 if ratio >= 0.8 else 2


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
