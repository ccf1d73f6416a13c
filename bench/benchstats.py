"""Figures the benches print (nearest-rank percentiles, an ours-vs-baseline line) and their smoke mode.

Benches run as scripts (`python bench/bench_x.py`), so this directory is on
sys.path and they import this module by name.

Every bench takes `--smoke`: tiny sizes, a few seconds, so that CI runs each one
(tests/bench/test_bench_smoke.py) and a product change that breaks a bench fails
there. A smoke run's figures measure nothing and its speed targets are not judged;
what it checks (a session completes as scripted, results are right) still fails it.

A bench is a user of its own: importing this module points the XDG base directories into a
temporary directory (removed at exit), so no bench reads the person's config or trust list or
leaves a `state.key` in their home. A bench that needs a particular directory sets it after.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import tempfile

_HOME = tempfile.mkdtemp(prefix="deepseek-ls-bench-")
atexit.register(shutil.rmtree, _HOME, True)
for _var, _name in (("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"),
                    ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data")):
    os.environ[_var] = os.path.join(_HOME, _name)
os.environ.pop("DEEPSEEK_LS_USER_CONFIG", None)


def pct(samples: list[float], q: float) -> float:
    """Nearest-rank percentile, `q` in 0..1 (0.95 for p95)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, ours: list[float], base: list[float], base_name: str) -> None:
    """One line: our median/p95, the baseline's, and the ratio of medians."""
    m, b = statistics.median(ours), statistics.median(base)
    print(
        f"{name:<34} median {m:8.2f} ms  p95 {pct(ours, 0.95):8.2f} ms | "
        f"{base_name:<22} median {b:8.2f} ms  p95 {pct(base, 0.95):8.2f} ms | ratio {m / b:5.2f}"
    )


def add_smoke_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, seconds: checks that the bench still runs (CI); measures nothing")


def smoke_sizes(args: argparse.Namespace, **sizes: object) -> bool:
    """With `--smoke`, replace the size options in `args` by `sizes` and say so; whether it is a smoke run."""
    if not args.smoke:
        return False
    for name, value in sizes.items():
        setattr(args, name, value)
    shown = ", ".join(f"{name}={value}" for name, value in sizes.items())
    print(f"# smoke run ({shown or 'default sizes'}): checks that the bench runs; the figures measure nothing")
    return True
