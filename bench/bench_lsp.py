"""Language server figures: codeLens and hover latency, server start time.

    .venv/bin/python bench/bench_lsp.py [--requests 200] [--starts 10] [--starts-only] [--hunks 50] [--smoke]

The real server (`python -m deepseek_ls serve --stdio`) is driven over stdio by
pytest-lsp's client, with the fake DeepSeek on loopback. Setup goes through the
real flow: `deepseek.plan` (one step on a 5,000-line file, forced max-think),
`deepseek.runStep` staging a 50-hunk patch. Then it measures:

- codeLens on that document (plan step lens + 50 hunk lenses), warm and right
  after an edit (new buffer version: hunks re-located);
- hover on a hunk line (router explanation) and on the step lens line;
- server start → initialize response.

Baselines measured in the same run: a no-op custom request
(`deepseek/pendingApprovals`, the JSON-RPC round trip over the same pipes) for
the request latencies, and a bare pygls server with no features for start-up
(started in turn with ours, A B A B ..., so both see the same load).
Targets (issue 7): codeLens and hover p95 < 10 ms; start → initialize < 400 ms;
(issue 31) start → initialize ≤ 1.2× the bare pygls server's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, client_capabilities

from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

from benchstats import add_smoke_option, pct, smoke_sizes

LINES = 5000
HUNKS = 50  # staged hunks (--hunks)
SERVER = [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"]
BARE_SERVER = [
    sys.executable,
    "-c",
    "from pygls.lsp.server import LanguageServer; LanguageServer('bare', '0').start_io()",
]


def big_file() -> str:
    return "".join(f"def func_{i}(x):\n    return x + {i}\n" for i in range(LINES // 2))


def hunk_diff(hunks: int) -> str:
    out = ["--- a/big.py", "+++ b/big.py"]
    for k in range(hunks):
        i = 50 + k * 40  # function index; its body is line 2*i+2 (1-based)
        line = 2 * i + 1
        out += [f"@@ -{line},2 +{line},2 @@", f" def func_{i}(x):", f"-    return x + {i}", f"+    return x + {i} + 1"]
    return "```diff\n" + "\n".join(out) + "\n```"


async def timed(n: int, call: Callable[[], Awaitable[Any]]) -> list[float]:
    await call()  # warm-up
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def row(name: str, samples: list[float], baseline: list[float] | None, target: float | None) -> str:
    p50, p95 = statistics.median(samples), pct(samples, 0.95)
    ratio = f"  x{p50 / statistics.median(baseline):5.1f} vs baseline p50" if baseline else ""
    verdict = f"  target p95 < {target:g} ms: {'OK' if p95 < target else 'MISSED'}" if target else ""
    return f"{name:<34} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms{ratio}{verdict}"


async def start_time(command: list[str], root: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=from_fs_path(str(root)))
    )
    elapsed = (time.perf_counter() - start) * 1000
    await client.shutdown_session()
    await client.stop()
    return elapsed


async def main(requests: int, hunks: int) -> None:
    fake = FakeDeepSeek().start()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        text = big_file()
        (root / "big.py").write_text(text)
        env = {**os.environ, "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "bench", "DEEPSEEK_LS_LOG": "warning",
               "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        plan = {"goal": "bump", "steps": [{"title": "Bump `func_2000`", "intent": "edit", "files": ["big.py"]}],
                "verification": [], "confidence": 0.9}
        fake.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(plan) + "\n```"})
        fake.add({"match": {"role": "executor"}, "content": hunk_diff(hunks)})

        # BENCH_LSP_PROFILE=out.prof runs the measured server under cProfile.
        profile = os.environ.get("BENCH_LSP_PROFILE")
        command = [sys.executable, "-m", "cProfile", "-o", profile, *SERVER[1:]] if profile else SERVER
        client = await ClientServerConfig(server_command=command, server_env=env).start()
        for method in (types.WORKSPACE_CODE_LENS_REFRESH, types.CLIENT_REGISTER_CAPABILITY):
            client.feature(method)(lambda params: None)
        for method in (names.NOTIFY_STREAM, names.NOTIFY_STATUS, names.NOTIFY_HUNKS_CHANGED):
            client.feature(method)(lambda params: None)
        uri = from_fs_path(str(root / "big.py"))
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=from_fs_path(str(root)),
                initialization_options={"index": {"enabled": False}, "router": {"force_profile": "max_think"}},
            )
        )
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        run = client.workspace_execute_command_async
        planned = await run(types.ExecuteCommandParams(command=names.CMD_PLAN, arguments=[{"prompt": "bump"}]))
        step = planned["plan"]["steps"][0]
        outcome = await run(types.ExecuteCommandParams(
            command=names.CMD_RUN_STEP, arguments=[{"session_id": planned["session_id"], "step_id": step["step_id"]}]))
        assert outcome["status"] == "staged", outcome

        lens_params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        lenses = await client.text_document_code_lens_async(lens_params)
        hunk_lenses = [lens for lens in lenses if lens.command.title == "Accept"]
        step_line = next(lens.range.start.line for lens in lenses if lens.command.title.startswith("▶"))
        assert len(hunk_lenses) == hunks, len(hunk_lenses)
        middle = hunk_lenses[hunks // 2].range.start.line

        def hover_at(line: int) -> Callable[[], Awaitable[Any]]:
            params = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                       position=types.Position(line=line, character=0))
            return lambda: client.text_document_hover_async(params)

        assert await hover_at(middle)() is not None
        assert await hover_at(step_line)() is not None

        version = [1]

        async def lens_after_edit() -> Any:
            version[0] += 1
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version[0]),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    text="#\n" if version[0] % 2 else "")]))
            return await client.text_document_code_lens_async(lens_params)

        baseline = await timed(requests, lambda: client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {}))
        results = {
            "codeLens (warm)": await timed(requests, lambda: client.text_document_code_lens_async(lens_params)),
            "codeLens (after an edit)": await timed(requests // 4, lens_after_edit),
            "hover on a max-think hunk": await timed(requests, hover_at(middle)),
            "hover on the step lens line": await timed(requests, hover_at(step_line)),
            "hover elsewhere (no decision)": await timed(requests, hover_at(1)),
        }
        # The test client's own share: decoding the same codeLens payload in Python.
        converter = client.protocol._converter
        payload = json.dumps(converter.unstructure(lenses))

        async def decode() -> Any:
            return converter.structure(json.loads(payload), list[types.CodeLens])

        client_decode = await timed(requests, decode)
        await client.shutdown_session()
        await client.stop()
    fake.stop()

    print(f"deepseek-ls LSP bench: {LINES}-line document, 1 plan step, {hunks} staged hunks, {requests} requests each")
    print(row("baseline: no-op request round trip", baseline, None, None))
    for name, samples in results.items():
        print(row(name, samples, baseline, 10.0))
    print(row(f"  of which client decode ({len(lenses)} lenses)", client_decode, None, None))


async def start_up(starts: int) -> None:
    """Start → initialize response, ours and a bare pygls server in turn (A B A B ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        env = {**os.environ, "DEEPSEEK_BASE_URL": "http://127.0.0.1:9", "DEEPSEEK_API_KEY": "bench",
               "DEEPSEEK_LS_LOG": "warning", "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        await start_time(BARE_SERVER, root, env)  # warm-up: the OS caches the same files for both
        await start_time(SERVER, root, env)
        start_ms, bare_ms = [], []
        for _ in range(starts):
            start_ms.append(await start_time(SERVER, root, env))
            bare_ms.append(await start_time(BARE_SERVER, root, env))
    ratio = statistics.median(start_ms) / statistics.median(bare_ms)
    print(f"start-up, {starts} starts each, interleaved; load {os.getloadavg()[0]:.1f}")
    print(row("server start -> initialize response", start_ms, bare_ms, 400.0)
          + f"  target <= 1.2x bare pygls: {'OK' if ratio <= 1.2 else 'MISSED'}")
    print(row("baseline: bare pygls server start", bare_ms, None, None))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--starts-only", action="store_true", help="measure start-up only")
    parser.add_argument("--hunks", type=int, default=HUNKS, help="hunks of the staged patch (at most 61)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, requests=4, starts=1, hunks=4)
    if not args.starts_only:
        asyncio.run(main(args.requests, args.hunks))
    asyncio.run(start_up(args.starts))
