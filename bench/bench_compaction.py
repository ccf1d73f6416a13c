"""Prompt-cache hit share of a 30-turn conversation with compaction, against the same conversation without it.

One executor conversation of 30 model calls, each answered by a tool call whose
result (~1.2k tokens) is added to the conversation, on a model with a 32k window:
the conversation outgrows the window about halfway. The fake DeepSeek server
reports `prompt_cache_hit_tokens` as DeepSeek does (the longest common prefix
with earlier prompts).

- with compaction (agent/compaction.py, the default threshold 0.8): older turns
  are summarized by the fast model; the head (instructions, repo map, plan,
  files, request) is sent as before, so the cache keeps hitting on it;
- baseline, in the same run: compaction off (`agent_loop.auto_compact = false`). The prompt is then
  fitted by priority (llm/fit.py): the repo map near the top is shortened by a
  different amount every call, so everything after it misses.

Target: at least 90% of the conversation's prompt tokens hit the cache with
compaction (the summarizer's own calls are shown apart, and in the total).
`--smoke` runs the same sizes (a few seconds) and still judges the target: the
share does not depend on the machine.

    .venv/bin/python bench/bench_compaction.py [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from benchstats import add_smoke_option, smoke_sizes

from deepseek_ls.agent.assemble import build_agent
from deepseek_ls.agent.routing_sink import bound
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.llm.errors import LLMError
from deepseek_ls.router import RouterSignals
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.ui_port import AutoApproveUI

TURNS = 30
WINDOW = 32_768
SUMMARY = {"decisions": ["read the modules one by one to find where totals are computed"],
           "files_touched": ["app.py"], "open_questions": ["whether mod_7 rounds"], "plan_state": "step 1 under way"}


def config(base_url: str, compaction: bool) -> Config:
    cfg = Config.model_validate({"models": {"bench-32k": {
        "preset": "openai-compatible", "id": "bench-32k", "base_url": base_url, "context_window": WINDOW,
        "max_output_tokens": 4096, "default_max_tokens": 1024}}})
    cfg.index.enabled = False
    cfg.llm.max_retries = 0
    for name in ("fast", "max_think"):
        cfg.llm.profiles[name] = cfg.llm.profiles[name].model_copy(update={"model": "bench-32k"})
    cfg.agent_loop.auto_compact = compaction  # at the default threshold, 0.8 of the window
    return cfg


def module_text(i: int) -> str:
    return "".join(f"def total_{i}_{n}(items):\n    return sum(x * {n} for x in items)  # module {i}\n"
                   for n in range(50))  # ~0.9k tokens: a file read, a search's matches


def head() -> list[dict]:
    repo_map = "\n".join(f"mod_{i}.py: " + ", ".join(f"total_{i}_{n}" for n in range(40)) for i in range(TURNS))
    return [
        {"role": "system", "content": "You are the executor of a coding agent. Make the step's change.\n" * 20},
        {"role": "user", "content": "Repository map:\n" + repo_map, "_fit": {"priority": 10, "label": "the repo map"}},
        {"role": "user", "content": "Plan: find where totals are computed and fix the rounding.",
         "_fit": {"priority": 50, "label": "the plan"}},
        {"role": "user", "content": "Files:\n" + "".join(module_text(100 + i) for i in range(5)),
         "_fit": {"priority": 40, "label": "file texts"}},  # the step's files, as the executor's prompt has them
        {"role": "user", "content": "Step 1: read each module, then fix the rounding in app.py."},
    ]


async def conversation(base_url: str, compaction: bool) -> tuple[list[dict], str | None]:
    """The 30 calls of one conversation: their `LLMCall@v1` payloads (summarizer's included), and the
    error that stopped it early, if one did."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = config(base_url, compaction)
        agent = build_agent(root, cfg, llm=LLMClient(cfg.llm), ui=AutoApproveUI(), index=None)
        try:
            rt = agent._new_session("bench", "agent")
            messages = head()
            stopped = None
            with bound(rt.session):
                for turn in range(TURNS):
                    decision = rt.router.decide(RouterSignals(prompt="bench", role="executor"), unit=f"bench:{turn}")
                    try:
                        await rt.complete(messages, decision, role="executor")
                    except LLMError as exc:
                        stopped = f"turn {turn + 1}: {exc.user_message}"
                        break
                    call = {"id": f"call_{turn}", "type": "function",
                            "function": {"name": "fs_read", "arguments": json.dumps({"path": f"mod_{turn}.py"})}}
                    messages += [{"role": "assistant", "content": "", "tool_calls": [call]},
                                 {"role": "tool", "tool_call_id": f"call_{turn}", "content": module_text(turn)}]
            return [e.payload for e in agent.store.open(rt.session_id).read()
                    if e.kind == "LLMCall@v1" and not e.payload.get("error")], stopped
        finally:
            await agent.llm.aclose()


def share(calls: list[dict]) -> tuple[float, int, int]:
    prompt = sum(c["usage"].get("prompt_tokens") or 0 for c in calls)
    hit = sum(c["usage"].get("prompt_cache_hit_tokens") or 0 for c in calls)
    return (hit / prompt if prompt else 0.0), hit, prompt


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_smoke_option(parser)
    smoke_sizes(parser.parse_args())
    os.environ["OPENAI_API_KEY"] = "bench-key"
    runs: dict[str, list[dict]] = {}
    stopped: dict[str, str | None] = {}
    for name, compaction in (("compaction", True), ("baseline", False)):
        # A server per run: each starts with a cold cache.
        fake = FakeDeepSeek([{"match": {"role": "executor"}, "repeat": True, "content": "reading on"},
                             {"match": {"role": "compactor"}, "repeat": True, "content": json.dumps(SUMMARY)}]).start()
        try:
            runs[name], stopped[name] = await conversation(fake.base_url, compaction)
        finally:
            fake.stop()
    ours = [c for c in runs["compaction"] if c["role"] == "executor"]
    base = runs["baseline"]
    if len(ours) != TURNS or stopped["compaction"]:
        print(f"the conversation with compaction did not run as scripted: {len(ours)} calls; {stopped['compaction']}",
              file=sys.stderr)
        return 1
    print(f"{'turn':>4} {'prompt':>7} {'hit%':>6} {'base prompt':>11} {'base hit%':>9}  baseline")
    for i, c in enumerate(ours, start=1):
        p, h = c["usage"]["prompt_tokens"], c["usage"]["prompt_cache_hit_tokens"]
        line = f"{i:>4} {p:>7} {100 * h / p:>5.1f}%"
        if i <= len(base):
            b = base[i - 1]
            bp, bh = b["usage"]["prompt_tokens"], b["usage"]["prompt_cache_hit_tokens"]
            note = "shortened to fit" if (b.get("fit") or {}).get("shortened") else ""
            line += f" {bp:>11} {100 * bh / bp:>8.1f}%  {note}"
        print(line)
    ratio, hit, prompt = share(ours)
    summarizer = [c for c in runs["compaction"] if c["role"] == "compactor"]
    all_ratio, _, all_prompt = share(runs["compaction"])
    base_ratio, _, base_prompt = share(base)
    print(f"compactions: {len(summarizer)} (summarizer prompts: {sum(c['usage']['prompt_tokens'] for c in summarizer)} tokens)")
    print(f"cache-hit share with compaction: {100 * ratio:.1f}% of the conversation's {prompt} prompt tokens "
          f"(target >= 90%); {100 * all_ratio:.1f}% of {all_prompt} with the summarizer's calls")
    print(f"baseline without compaction (fitted by priority): {100 * base_ratio:.1f}% of {base_prompt} prompt tokens "
          f"in {len(base)} calls" + (f"; stopped at {stopped['baseline']}" if stopped["baseline"] else ""))
    return 0 if ratio >= 0.9 else 2


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
