"""Policy figures: path checks over a real file tree, redaction of a request body.

    .venv/bin/python bench/bench_policy.py [--rounds 20] [--smoke]

With the baseline measured in the same run:
- PathPolicy.normalize over every file of the installed site-packages tree (what
  `fs.list` does), against pathspec's GitIgnoreSpec.match_file of the same deny-list
  over the same paths (the deny-list match alone, no other check);
- redact_obj over a ~100 KB chat request body, against `json.dumps` of the same body
  (one linear pass over the same data), and against redact_obj without the maintained
  rule set (`policy/secret_rules.json`: what those ~430 rules add), interleaved;
- the rule set's needle gate alone: Hyperscan (x86_64 Linux) and Aho-Corasick (the other
  platforms) against the substring tests used where neither is installed.
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

from benchstats import add_smoke_option, report, smoke_sizes

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
    bench_rule_set(body, rounds)


def bench_rule_set(body: dict, rounds: int) -> None:
    from deepseek_ls.policy import redact
    from deepseek_ls.policy.rule_set import RuleSet, rule_set

    shipped, empty = rule_set(), RuleSet([])
    with_rules, without = [], []
    for _ in range(rounds):
        redact.rule_set = lambda: shipped
        t = time.perf_counter()
        redact_obj(body)
        with_rules.append((time.perf_counter() - t) * 1000)
        redact.rule_set = lambda: empty
        t = time.perf_counter()
        redact_obj(body)
        without.append((time.perf_counter() - t) * 1000)
    redact.rule_set = rule_set
    report(f"redact_obj, {len(shipped.rules)} rules", with_rules, without, "without the rule set")
    lowered = json.dumps(body).lower()
    times: dict[str, list[float]] = {"hyperscan": [], "aho-corasick": [], "python": []}
    for _ in range(rounds):
        for engine, samples in times.items():
            shipped.prefer = engine
            try:
                t = time.perf_counter()
                shipped.gated(lowered)
                samples.append((time.perf_counter() - t) * 1000)
            except (AttributeError, ImportError):  # not installed here
                pass
    shipped.prefer = None
    for engine in ("hyperscan", "aho-corasick"):
        if times[engine]:
            report(f"rule gate ({engine})", times[engine], times["python"], "substring tests")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, rounds=2)
    bench_paths(args.rounds)
    bench_redact(args.rounds)


if __name__ == "__main__":
    main()
