"""Policy figures: path checks over a real file tree, redaction of a request body.

    .venv/bin/python bench/bench_policy.py [--rounds 20]

With the baseline measured in the same run:
- PathPolicy.normalize over every file of the installed site-packages tree (what
  `fs.list` does), against pathspec's GitIgnoreSpec.match_file of the same deny-list
  over the same paths (the deny-list match alone, no other check);
- redact_obj over a ~100 KB chat request body, against `json.dumps` of the same body
  (one linear pass over the same data).
Prints median and p95 in ms, and the ratio of medians (ours / baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pathspec

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy import PathPolicy, PolicyViolation
from deepseek_ls.policy.redact import redact_obj
from deepseek_ls.tools.fs import workspace_files

from benchstats import report

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def bench_paths(rounds: int) -> None:
    files = workspace_files(SITE)
    deny = PolicyConfig().deny_paths
    policy = PathPolicy(SITE, deny)
    spec = pathspec.GitIgnoreSpec.from_lines([p.lower() for p in deny])
    ours, base = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        for rel in files:
            try:
                policy.normalize(rel)
            except PolicyViolation:
                pass
        ours.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        for rel in files:
            spec.match_file(rel.lower())
        base.append((time.perf_counter() - t) * 1000)
    print(f"paths: {len(files)} files of site-packages, {len(deny)} deny patterns")
    report("PathPolicy.normalize (all)", ours, base, "pathspec match_file (all)")


def bench_redact(rounds: int) -> None:
    code = (SITE / "pathspec" / "pathspec.py").read_text()
    body = {
        "model": "deepseek-chat",
        "messages": [{"role": "system", "content": "You are a coding agent."}]
        + [{"role": "user" if i % 2 else "tool", "content": code[:12_000] + f"\n# chunk {i}"} for i in range(8)],
        "tools": [{"type": "function", "function": {"name": f"t{i}", "parameters": {"type": "object"}}} for i in range(11)],
    }
    ours, base = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        redact_obj(body)
        ours.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        json.dumps(body)
        base.append((time.perf_counter() - t) * 1000)
    print(f"request body: {len(json.dumps(body))} bytes")
    report("redact_obj(request body)", ours, base, "json.dumps(body)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    bench_paths(args.rounds)
    bench_redact(args.rounds)


if __name__ == "__main__":
    main()
