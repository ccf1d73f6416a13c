"""Figures the benches print: nearest-rank percentiles and an ours-vs-baseline line.

Benches run as scripts (`python bench/bench_x.py`), so this directory is on
sys.path and they import this module by name.
"""

from __future__ import annotations

import statistics


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
