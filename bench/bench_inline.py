"""Inline completion figures: latency we add, and what a typing person costs.

    .venv/bin/python bench/bench_inline.py [--requests 200] [--keys 600] [--smoke]

The real server (`python -m deepseek_ls serve --stdio`) driven over stdio by pytest-lsp's
client, the fake DeepSeek's FIM endpoint (`/beta/completions`) on loopback, in one run:

1. **Latency added by us**: `textDocument/inlineCompletion` request → response, minus the fake
   server's own time for the FIM request it caused (its request line read → the answer
   written, `--latency-ms` of it scripted, less any wait for a body we were still sending:
   sending the request and reading the answer stay ours), over `--requests` requests on
   distinct buffers (debounce 0: the debounce is a wait we choose, not overhead).
   Goal: p95 ≤ 5 ms.
2. **A replayed typing trace**: `--keys` keystrokes of a small Python file at 60 ms each, a
   `--pause-ms` pause after the first word of each line (the person reading the suggestion);
   the fake answers each FIM request after `--fim-ms` with the next characters of the file, so
   a suggestion is right and typing through it is what a person does. The editor sends
   `textDocument/inlineCompletion` on every keystroke (as VS Code does), our server debounces
   (75 ms, the default), cancels and reuses. Against it, in the same run, a naive client that
   sends a FIM request on every keystroke and never cancels. Figures: FIM requests sent,
   requests cancelled before their answer (the fake saw the hang-up: nothing billed), and
   tokens billed for suggestions nobody saw (answered after the next keystroke).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, client_capabilities

from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

from benchstats import add_smoke_option, pct, smoke_sizes

SERVER = [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"]
KEY_MS = 60
MARKER = 40  # characters before the cursor that say where in the file a FIM prompt was cut
SUGGEST = 24  # characters of the file the fake suggests after the cursor
SOURCE = '''"""Invoices: totals, taxes and the lines a customer sees."""

from dataclasses import dataclass


@dataclass
class Line:
    name: str
    quantity: int
    unit_price: float

    def total(self) -> float:
        return self.quantity * self.unit_price


def subtotal(lines: list[Line]) -> float:
    return sum(line.total() for line in lines)


def tax(amount: float, rate: float = 0.2) -> float:
    return round(amount * rate, 2)


def invoice_total(lines: list[Line], rate: float = 0.2) -> float:
    amount = subtotal(lines)
    return round(amount + tax(amount, rate), 2)


def describe(lines: list[Line]) -> str:
    rows = [f"{line.name}: {line.quantity} x {line.unit_price:.2f}" for line in lines]
    return "\\n".join(rows + [f"total: {invoice_total(lines):.2f}"])
'''


def typed_text(keys: int) -> str:
    text = SOURCE
    while len(text) < keys:
        text += SOURCE
    return text[:keys]


def trace(keys: int, pause_ms: int) -> list[tuple[float, int]]:
    """(when in seconds from the start, characters typed after that keystroke)."""
    text, out, at = typed_text(keys), [], 0.0
    for index in range(1, len(text) + 1):
        line_start = text.rfind("\n", 0, index - 1) + 1
        word_end = len(text[line_start:index]) - len(text[line_start:index].lstrip()) + 4
        at += KEY_MS / 1000
        out.append((at, index))
        if index - line_start == word_end:
            at += pause_ms / 1000  # the person reads the suggestion
    return out


def script(text: str, fim_ms: int) -> list[dict[str, Any]]:
    """One reply per position, the latest first: the first whose marker the prompt contains wins."""
    replies = []
    for position in range(len(text), 0, -1):
        marker = text[max(0, position - MARKER) : position]
        rest = text[position : position + SUGGEST].split("\n")[0]
        replies.append({"match": {"endpoint": "fim", "contains": marker}, "content": rest or " ", "repeat": True,
                        "fault": {"delay_before_first_byte": fim_ms / 1000}})
    return replies


@dataclass
class Outcome:
    sent: int = 0
    cancelled: int = 0
    billed_tokens: int = 0
    discarded_tokens: int = 0
    shown: int = 0
    reused: int = 0
    notes: dict[str, Any] = field(default_factory=dict)


def billed_tokens(record: Any) -> int:
    usage = record.billed or {}
    return int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)


def fake_time(record: Any) -> float:
    """The fake's own time for one request (seconds): request line read → answer written, less the
    wait for a body the client was still sending (that is the client's time)."""
    return record.answered_at - record.received_at - record.body_wait


def position_of(prompt: str, text: str) -> int:
    """Which keystroke a FIM prompt was cut at: the longest typed prefix its end matches."""
    for position in range(len(text), 0, -1):
        if prompt.endswith(text[max(0, position - MARKER) : position]):
            return position
    return 0


async def start(root: Path, env: dict[str, str], settings: dict[str, Any]) -> Any:
    client = await ClientServerConfig(server_command=SERVER, server_env=env).start()
    for method in (types.CLIENT_REGISTER_CAPABILITY,):
        client.feature(method)(lambda params: None)
    for method in (names.NOTIFY_STATUS, names.NOTIFY_STREAM):
        client.feature(method)(lambda params: None)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=from_fs_path(str(root)),
        initialization_options=settings))
    return client


def inline_params(uri: str, text: str) -> types.InlineCompletionParams:
    lines = text.split("\n")
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=len(lines) - 1, character=len(lines[-1])),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic))


def change(client: Any, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def latency(client: Any, fake: FakeDeepSeek, root: Path, requests: int, latency_ms: int) -> list[float]:
    """Request → response minus the fake's own time, per request (ms)."""
    fake.add({"match": {"endpoint": "fim", "contains": "# latency"}, "content": "pass", "repeat": True,
              "fault": {"delay_before_first_byte": latency_ms / 1000}})
    uri = from_fs_path(str(root / "latency.py"))
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text="")))
    added = []
    for index in range(requests + 1):  # the first one warms up (imports, the HTTP connection)
        text = f"# latency {index}\ndef f_{index}(x):\n    "
        change(client, uri, index + 2, text)
        count = len(fake.requests)
        start = time.perf_counter()
        result = await client.text_document_inline_completion_async(inline_params(uri, text))
        elapsed = time.perf_counter() - start
        assert result is not None and result.items[0].insert_text == "pass", result
        record = fake.requests[count]
        await asyncio.to_thread(record.finished.wait, 10)
        if index:
            added.append((elapsed - fake_time(record)) * 1000)
    return added


async def direct(fake: FakeDeepSeek, requests: int) -> list[float]:
    """For scale: the same FIM request straight from httpx (no Nagle) to the fake, minus the fake's
    own time: what a general HTTP client costs on loopback (the server's own FIM connection,
    llm/fim_http.py, costs less)."""
    transport = httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    out = []
    async with httpx.AsyncClient(transport=transport) as http:
        for index in range(requests + 1):
            count = len(fake.requests)
            start = time.perf_counter()
            await http.post(f"{fake.base_url}/beta/completions", headers={"Authorization": "Bearer bench"},
                            json={"model": "deepseek-v4-flash", "prompt": f"# latency {index}\n", "suffix": ""})
            elapsed = time.perf_counter() - start
            record = fake.requests[count]
            await asyncio.to_thread(record.finished.wait, 10)
            if index:
                out.append((elapsed - fake_time(record)) * 1000)
    return out


async def ours(client: Any, fake: FakeDeepSeek, root: Path, steps: list[tuple[float, int]], text: str) -> Outcome:
    """The editor asks our server on every keystroke; the server debounces, cancels, reuses."""
    uri = from_fs_path(str(root / "typed.py"))
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text="")))
    first = len(fake.requests)
    typed_at: list[float] = []
    answers: list[tuple[int, float, str | None]] = []  # keystroke, arrival, text

    async def ask(key: int, typed: str) -> None:
        result = await client.text_document_inline_completion_async(inline_params(uri, typed))
        answers.append((key, time.perf_counter(), result.items[0].insert_text if result and result.items else None))

    pending = []
    origin = time.perf_counter()
    for key, (at, position) in enumerate(steps):
        await asyncio.sleep(max(0.0, origin + at - time.perf_counter()))
        typed = text[:position]
        change(client, uri, key + 2, typed)
        typed_at.append(time.perf_counter())
        pending.append(asyncio.ensure_future(ask(key, typed)))
    await asyncio.gather(*pending)
    status = await client.protocol.send_request_async(names.REQ_INLINE_COMPLETION_STATUS, {})
    records = [r for r in fake.requests[first:] if r.endpoint == "fim"]
    await asyncio.to_thread(lambda: [r.finished.wait(10) for r in records])
    out = Outcome(sent=len(records), cancelled=sum(r.disconnected and r.billed is None for r in records))
    out.billed_tokens = sum(billed_tokens(r) for r in records)
    # A suggestion is seen when its answer reaches the editor before the next keystroke.
    seen = {key for key, arrived, shown in answers
            if shown and (key + 1 >= len(typed_at) or arrived < typed_at[key + 1])}
    out.shown = len(seen)
    positions = [position for _, position in steps]
    for record in records:
        if record.billed is None:
            continue
        key = positions.index(position_of(record.body["prompt"], text)) if record.body else -1
        if key not in seen:
            out.discarded_tokens += billed_tokens(record)
    stats = getattr(status, "stats", None)
    out.reused = getattr(stats, "reused", 0) if stats is not None else 0
    return out


async def naive(fake: FakeDeepSeek, steps: list[tuple[float, int]], text: str) -> Outcome:
    """A client that sends a FIM request on every keystroke (whole buffer) and never cancels."""
    first = len(fake.requests)
    typed_at: list[float] = []
    arrivals: dict[int, float] = {}
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1000)) as http:

        async def ask(key: int, typed: str) -> None:
            await http.post(f"{fake.base_url}/beta/completions", headers={"Authorization": "Bearer bench"},
                            json={"model": "deepseek-v4-flash", "prompt": typed, "suffix": "", "max_tokens": 128})
            arrivals[key] = time.perf_counter()

        pending = []
        origin = time.perf_counter()
        for key, (at, position) in enumerate(steps):
            await asyncio.sleep(max(0.0, origin + at - time.perf_counter()))
            typed_at.append(time.perf_counter())
            pending.append(asyncio.ensure_future(ask(key, text[:position])))
        await asyncio.gather(*pending)
    records = [r for r in fake.requests[first:] if r.endpoint == "fim"]
    out = Outcome(sent=len(records), cancelled=sum(r.disconnected and r.billed is None for r in records))
    out.billed_tokens = sum(billed_tokens(r) for r in records)
    positions = [position for _, position in steps]
    for record in records:
        key = positions.index(position_of(record.body["prompt"], text))
        stale = key + 1 < len(typed_at) and arrivals.get(key, 0) > typed_at[key + 1]
        out.shown += not stale
        out.discarded_tokens += billed_tokens(record) if stale else 0
    return out


def row(name: str, samples: list[float], target: float) -> str:
    p50, p95 = statistics.median(samples), pct(samples, 0.95)
    return f"{name:<44} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  target p95 <= {target:g} ms: {'OK' if p95 <= target else 'MISSED'}"


async def main(args: argparse.Namespace) -> None:
    text = typed_text(args.keys)
    steps = trace(args.keys, args.pause_ms)
    fake = FakeDeepSeek(script(text, args.fim_ms)).start()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env = {**os.environ, "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "bench",
               "DEEPSEEK_LS_LOG": "warning", "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        settings = {"index": {"enabled": False}, "inline_completion": {"debounce_ms": 0, "index_hits": 0}}
        client = await start(root, env, settings)
        added = await latency(client, fake, root, args.requests, args.latency_ms)
        rpc = []
        for _ in range(args.requests):  # the JSON-RPC round trip alone, over the same pipes
            began = time.perf_counter()
            await client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})
            rpc.append((time.perf_counter() - began) * 1000)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"inline_completion": {"debounce_ms": args.debounce_ms}}))
        ours_run = await ours(client, fake, root, steps, text)
        await client.shutdown_session()
        await client.stop()
        naive_run = await naive(fake, steps, text)
        baseline = await direct(fake, args.requests)
    fake.stop()
    duration = steps[-1][0]
    print(f"deepseek-ls inline completion bench: {args.requests} requests (fake FIM latency {args.latency_ms} ms); "
          f"typing trace of {len(steps)} keystrokes at {KEY_MS} ms, a {args.pause_ms} ms pause after each line's "
          f"first word ({duration:.1f} s), fake FIM latency {args.fim_ms} ms, debounce {args.debounce_ms} ms")
    print(row("latency added by us (request -> response)", added, 5.0))
    print(f"{'  for scale: httpx straight to the fake':<44} p50 {statistics.median(baseline):6.2f} ms  "
          f"p95 {pct(baseline, 0.95):6.2f} ms  (an HTTP client alone; the server's FIM connection is lighter)")
    print(f"{'  baseline: a no-op LSP request round trip':<44} p50 {statistics.median(rpc):6.2f} ms  "
          f"p95 {pct(rpc, 0.95):6.2f} ms  (JSON-RPC over stdio alone, included above)")
    print(f"{'typing trace':<28} {'FIM requests sent':>18} {'cancelled in flight':>20} {'tokens billed':>14} "
          f"{'billed, never seen':>19} {'suggestions seen':>17} {'reused':>7}")
    for name, run in (("ours (debounce/cancel/reuse)", ours_run), ("naive (every keystroke)", naive_run)):
        print(f"{name:<28} {run.sent:>18} {run.cancelled:>20} {run.billed_tokens:>14} {run.discarded_tokens:>19} "
              f"{run.shown:>17} {run.reused:>7}")
    assert ours_run.sent <= naive_run.sent, "our server sent more FIM requests than a client asking on every keystroke"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keys", type=int, default=600)
    parser.add_argument("--latency-ms", type=int, default=20, help="the fake's FIM latency in the latency part")
    parser.add_argument("--fim-ms", type=int, default=250, help="the fake's FIM latency in the typing trace")
    parser.add_argument("--pause-ms", type=int, default=600)
    parser.add_argument("--debounce-ms", type=int, default=75)
    add_smoke_option(parser)
    arguments = parser.parse_args()
    smoke_sizes(arguments, requests=10, keys=40)
    asyncio.run(main(arguments))
