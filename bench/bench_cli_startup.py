"""CLI start-up time: what a shell user (and an editor starting `serve`) waits before work begins.

    .venv/bin/python bench/bench_cli_startup.py [--runs 10]

Baseline measured in the same run, interleaved with ours (one run of every case
per round, so all see the same load): `python -c pass` with the same interpreter.
`--help` lists the commands from a table (no command module imported); the
others import only their own module. `config show` prints from its cache
(cli/show_cache.py) after the first run, as for a user who runs it again with
nothing changed; `config show (cold)` clears that cache before every run. Target (issue 17): `--help` and `config
show` <= 3x the baseline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [
    ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
    ("deepseek-ls --version", [sys.executable, "-m", "deepseek_ls", "--version"]),
    ("deepseek-ls config show", [sys.executable, "-m", "deepseek_ls", "config", "show"]),
    ("deepseek-ls sessions", [sys.executable, "-m", "deepseek_ls", "sessions"]),
    ("deepseek-ls --help", [sys.executable, "-m", "deepseek_ls", "--help"]),
    ("deepseek-ls config show --json", [sys.executable, "-m", "deepseek_ls", "config", "show", "--json"]),
    ("deepseek-ls config show (cold)", [sys.executable, "-m", "deepseek_ls", "config", "show"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
        env["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # `config show`: the first run fills it
        print(f"# CLI start-up, {args.runs} runs each, load {os.getloadavg()[0]:.1f}, empty workspace {tmp}")
        samples: dict[str, list[float]] = {label: [] for label, _ in CASES}
        for _ in range(args.runs):
            for label, argv in CASES:
                run_env = env
                if label.endswith("(cold)"):  # an empty cache of its own
                    shutil.rmtree(Path(tmp) / "cold-cache", ignore_errors=True)
                    run_env = {**env, "XDG_CACHE_HOME": str(Path(tmp) / "cold-cache")}
                t = time.perf_counter()
                subprocess.run(argv, cwd=tmp, env=run_env, capture_output=True, check=True)
                samples[label].append((time.perf_counter() - t) * 1000)
        baseline = statistics.median(samples[CASES[0][0]])
        for label, _ in CASES:
            med = statistics.median(samples[label])
            p95 = sorted(samples[label])[min(args.runs - 1, int(0.95 * args.runs))]
            print(f"  {label:<36} median {med:7.1f} ms   p95 {p95:7.1f} ms   {med / baseline:5.2f}x baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
