"""Client-added latency and streaming throughput of `LLMClient`, against the fake server.

The fake runs as a separate process (no GIL sharing) and stamps, with the
system-wide monotonic clock, the moment just before it writes the first
text-bearing chunk. The client's figure is that moment -> the first delta
delivered to `on_delta`; the baseline, measured in the same run, is that
moment -> the same bytes reaching a bare `httpx` stream (no SSE parsing, JSON,
assembly, retries or recording). Throughput: chunks/s assembling one long
stream, against a baseline that only splits and JSON-decodes the lines.

    .venv/bin/python bench/bench_llm_client.py [--requests 200] [--chunks 20000] [--smoke]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import httpx

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm import LLMClient
from deepseek_ls.testkit.process import FakeDeepSeekProcess

from benchstats import add_smoke_option, pct, smoke_sizes

USER = [{"role": "user", "content": "bench"}]
HEADERS = {"Authorization": "Bearer bench", "X-DeepSeek-LS-Role": "bench"}


def body(stream: bool = True) -> dict:
    return {"model": "deepseek-chat", "messages": USER, "stream": stream}


async def first_content_raw(http: httpx.AsyncClient, base_url: str) -> float:
    """Baseline: when the first content bytes reach a bare httpx stream."""
    first = None
    async with http.stream("POST", f"{base_url}/chat/completions", json=body(),
                           headers={**HEADERS, "X-DeepSeek-LS-Role": "latency-base"}) as response:
        async for raw in response.aiter_bytes():
            if first is None and b'"content": "f' in raw:
                first = time.perf_counter()
    assert first is not None
    return first


async def run_latency(fake: FakeDeepSeekProcess, llm: LLMClient, n: int) -> tuple[list[float], list[float]]:
    """Client and baseline requests alternate, so both see the same machine load."""
    client_firsts: list[float] = []
    base_firsts: list[float] = []
    async with httpx.AsyncClient() as http:
        await first_content_raw(http, fake.base_url)  # warm-up
        for _ in range(n):
            seen: list[float] = []

            def on_delta(delta, seen=seen) -> None:
                if not seen:
                    seen.append(time.perf_counter())

            await llm.complete(USER, role="latency", on_delta=on_delta)
            client_firsts.append(seen[0])
            base_firsts.append(await first_content_raw(http, fake.base_url))
    recorded = fake.requests()
    stamps = {role: [r["first_content_at"] for r in recorded if r["role"] == role][-n:]
              for role in ("latency", "latency-base")}
    client_ms = [(got - sent) * 1000 for got, sent in zip(client_firsts, stamps["latency"])]
    base_ms = [(got - sent) * 1000 for got, sent in zip(base_firsts, stamps["latency-base"])]
    return client_ms, base_ms


async def run_throughput(fake: FakeDeepSeekProcess, llm: LLMClient, chunks: int, runs: int) -> tuple[list[float], list[float]]:
    fake.add({"match": {"role": "throughput"}, "content": "x" * chunks, "chunk_chars": 1, "repeat": True})
    client_rates, base_rates = [], []
    for _ in range(runs):
        start = time.perf_counter()
        result = await llm.complete(USER, role="throughput", on_delta=lambda d: None)
        client_rates.append(result.chunks / (time.perf_counter() - start))
        async with httpx.AsyncClient() as http:
            start = time.perf_counter()
            count = 0
            async with http.stream("POST", f"{fake.base_url}/chat/completions", json=body(),
                                   headers={**HEADERS, "X-DeepSeek-LS-Role": "throughput"}) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: {"):
                        json.loads(line[6:])
                        count += 1
            base_rates.append(count / (time.perf_counter() - start))
    return client_rates, base_rates


def report(name: str, values: list[float], baseline: list[float], unit: str) -> None:
    p50, p95 = statistics.median(values), pct(values, 0.95)
    b50, b95 = statistics.median(baseline), pct(baseline, 0.95)
    print(f"{name}: client p50 {p50:.3f} {unit}, p95 {p95:.3f} {unit} | "
          f"baseline p50 {b50:.3f} {unit}, p95 {b95:.3f} {unit} | ratio p50 {p50 / b50:.2f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, requests=5, chunks=200, runs=1)
    with FakeDeepSeekProcess() as fake:
        # A short pause after each chunk keeps the server quiet while the client works.
        for role in ("latency", "latency-base"):
            fake.add({"match": {"role": role}, "content": "first second third", "chunk_chars": 6,
                      "chunk_delay": 0.003, "repeat": True})
        env = {"DEEPSEEK_API_KEY": "bench", "DEEPSEEK_BASE_URL": fake.base_url}
        async with LLMClient(LLMConfig(), env=env) as llm:
            await llm.complete(USER, role="latency")  # warm-up: connection pool, TLS context
            client_ms, base_ms = await run_latency(fake, llm, args.requests)
            report(f"first-content latency over {args.requests} requests", client_ms, base_ms, "ms")
            added = [c - b for c, b in zip(sorted(client_ms), sorted(base_ms))]
            print(f"client-added latency (client - baseline, by rank): p50 {statistics.median(added):.3f} ms, "
                  f"p95 {pct(added, 0.95):.3f} ms (target p95 < 5 ms)")
            rates, base_rates = await run_throughput(fake, llm, args.chunks, args.runs)
            print(f"throughput on a {args.chunks}-chunk stream ({args.runs} runs): client median "
                  f"{statistics.median(rates):,.0f} chunks/s | baseline (lines + json only) median "
                  f"{statistics.median(base_rates):,.0f} chunks/s | ratio {statistics.median(rates) / statistics.median(base_rates):.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
