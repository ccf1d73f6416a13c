"""CLI start-up time: what a shell user (and an editor starting `serve`) waits before work begins.

    .venv/bin/python bench/bench_cli_startup.py [--runs 10]

Baseline measured in the same run: `python -c pass` with the same interpreter.
`--help` imports every command module (what every command cost before commands
were loaded on demand); the others import only their own module.
"""

from __future__ import annotations

import argparse
import os
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
    ("deepseek-ls --help (all commands)", [sys.executable, "-m", "deepseek_ls", "--help"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
        env["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")
        print(f"# CLI start-up, {args.runs} runs each, load {os.getloadavg()[0]:.1f}, empty workspace {tmp}")
        baseline = None
        for label, argv in CASES:
            samples = []
            for _ in range(args.runs):
                t = time.perf_counter()
                subprocess.run(argv, cwd=tmp, env=env, capture_output=True, check=True)
                samples.append((time.perf_counter() - t) * 1000)
            med = statistics.median(samples)
            p95 = sorted(samples)[min(len(samples) - 1, int(0.95 * len(samples)))]
            baseline = baseline or med
            print(f"  {label:<36} median {med:7.1f} ms   p95 {p95:7.1f} ms   {med / baseline:5.1f}x baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
