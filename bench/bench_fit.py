"""What fitting a prompt into the model's window adds to building a request (`LLMClient.build_body`).

Cases: a small prompt on DeepSeek's 1M window (never tokenized), 200 KB of file text against an
8k-token model (estimate, shortened), and 200 KB against a DeepSeek entry with a 64k window (near
the limit: counted with DeepSeek's tokenizer, then shortened). Baseline, measured in the same run:
serializing the same request body to JSON, which every request pays anyway.

    .venv/bin/python bench/bench_fit.py [--rounds 30] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import time

from deepseek_ls.config_models import Config
from deepseek_ls.llm import LLMClient
from deepseek_ls.llm.tokens import exact_counter

from benchstats import add_smoke_option, report, smoke_sizes

FILES = "".join(f"def handler_{i}(request):\n    return render(request, 'page_{i}.html', {{'n': {i}}})\n"
                for i in range(2600))  # ~200 KB


def messages(files: str) -> list[dict]:
    return [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": files[: len(files) // 4], "_fit": {"priority": 10, "label": "the repo map"}},
        {"role": "user", "content": files, "_fit": {"priority": 40, "label": "file texts"}},
        {"role": "user", "content": "Step 1: rename handler_3."},
    ]


def client(entry: dict) -> LLMClient:
    config = Config.model_validate({"models": {"m": entry}})
    config.llm.profiles["fast"] = config.llm.profiles["fast"].model_copy(update={"model": "m"})
    return LLMClient(config.llm, env={"DEEPSEEK_API_KEY": "k", "OPENAI_API_KEY": "k"})


def measure(llm: LLMClient, msgs: list[dict], rounds: int) -> tuple[list[float], list[float]]:
    resolved = llm.resolve("fast")
    ours, base = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        body = llm.build_body(resolved, msgs, stream=True)
        ours.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        json.dumps({**body, "messages": msgs}, ensure_ascii=False)
        base.append((time.perf_counter() - start) * 1000)
    return ours, base


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, rounds=1)
    rounds = args.rounds
    start = time.perf_counter()
    exact_counter("deepseek")
    print(f"DeepSeek tokenizer load (once per process): {(time.perf_counter() - start) * 1000:.0f} ms")
    cases = [
        ("small prompt, 1M window", {"preset": "deepseek-v4-flash"}, messages(FILES[:2000])),
        ("200 KB, 8k window (estimate)", {"preset": "openai-compatible", "id": "x", "context_window": 8192,
                                          "max_output_tokens": 2048, "default_max_tokens": 1024}, messages(FILES)),
        ("200 KB, 64k DeepSeek (exact)", {"preset": "deepseek-v4-flash", "context_window": 65536,
                                          "max_output_tokens": 8192, "default_max_tokens": 4096}, messages(FILES)),
    ]
    for name, entry, msgs in cases:
        ours, base = measure(client(entry), msgs, rounds)
        report(name, ours, base, "json.dumps of the body")


if __name__ == "__main__":
    main()
