"""How long an MCP tool result holds the event loop before the model sees it (`render_result`).

    .venv/bin/python bench/bench_mcp_result.py [--runs 5] [--smoke]

A hostile (or merely careless) server can answer with tens of megabytes. `render_result` runs on
the event loop (the ACP connection, the language server), so its time is time nothing else is
answered. Ours cuts to `mcp.max_result_bytes` first and redacts only what is kept; the baseline,
measured in the same run and interleaved with ours, is what it did before: redact the whole text,
then cut. Each line prints ours / baseline medians and p95, and their ratio.
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace
import time

from benchstats import add_smoke_option, report, smoke_sizes

from deepseek_ls.policy.redact import redact_obj
from deepseek_ls.tools.mcp.provider import render_result

CAP = 32_000


def _result(size: int) -> SimpleNamespace:
    line = "2026-11-24 INFO worker-7 processed batch id=4411 rows=128 status=ok\n"
    text = "head ghp_" + "Zx9" * 12 + "\n" + line * (size // len(line)) + "tail AKIAIOSFODNN7EXAMPLE\n"
    return SimpleNamespace(content=[SimpleNamespace(type="text", text=text)], structured_content=None, is_error=False)


def _baseline(result: SimpleNamespace) -> str:
    text = redact_obj("\n".join(b.text for b in result.content))
    raw = text.encode("utf-8")
    if len(raw) > CAP:
        half = CAP // 2
        text = raw[:half].decode("utf-8", "ignore") + "\n...\n" + raw[-half:].decode("utf-8", "ignore")
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mb", type=int, nargs="+", default=[1, 10, 50], help="result sizes (MB)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, runs=1, mb=[1])
    for mb in args.mb:
        result = _result(mb * 1024 * 1024)
        ours: list[float] = []
        base: list[float] = []
        for _ in range(args.runs):
            t = time.perf_counter()
            out = render_result(result, CAP)["text"]
            ours.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            _baseline(result)
            base.append((time.perf_counter() - t) * 1000)
            assert "ghp_" not in out and "AKIA" not in out, "a secret survived the cut"
        report(f"render_result, {mb} MB text", ours, base, "redact whole, then cut")


if __name__ == "__main__":
    main()
