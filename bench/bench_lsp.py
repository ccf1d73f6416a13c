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
the request latencies, and a bare pygls server with no features for start-up.

Start-up is measured as an editor starts the server: the console script
(`deepseek-ls serve --stdio`, what Neovim and VS Code run) and `python -m
deepseek_ls serve --stdio`, against a bare pygls `LanguageServer` (same Python,
same venv, `python -c`), started in turn (A B C A B C ..., so all see the same
load), each answered by a client that is only a pipe: spawn, write `initialize`
(VS Code's capabilities), read until the answer, then `shutdown` and `exit` (no
`initialized`: its work is after the answer). The servers run with the
environment an editor gives them: no `DEEPSEEK_LS_LOG` (the default level logs,
and the first record loads the redaction rules) and bytecode caches written (a
`PYTHONDONTWRITEBYTECODE` of the shell would compile our modules from source on
every start while pygls' come compiled from site-packages). Wall time is noisy on
a loaded machine, so the CPU time the server process had used when its answer
arrived (Linux: /proc) is printed beside it.
Targets (issue 7): codeLens and hover p95 < 10 ms; start → initialize < 400 ms;
(issue 31) start → initialize ≤ 1.2× the bare pygls server's: the median over rounds of
each start's wall time over the bare server's in the same round (the ratio of medians and of the
best starts are printed beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
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
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, client_capabilities

import deepseek_ls
from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

from benchstats import add_smoke_option, pct, smoke_sizes

LINES = 5000
HUNKS = 50  # staged hunks (--hunks)
SERVER = [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"]
SCRIPT = Path(sys.executable).with_name("deepseek-ls")  # the console script, as installed beside python
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


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_answer(stream: Any, msg_id: int) -> dict[str, Any]:
    """Read LSP messages from `stream` until the answer to `msg_id`."""
    while True:
        length = 0
        while (line := stream.readline()) not in (b"\r\n", b"\n"):
            if not line:
                raise RuntimeError("the server closed its output before answering")
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        message = json.loads(stream.read(length))
        if message.get("id") == msg_id and "method" not in message:
            return message


def _cpu_ms(pid: int) -> float | None:
    """CPU time (user + system) process `pid` has used so far; None where /proc is not."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def start_once(command: list[str], initialize: bytes, env: dict[str, str], cwd: Path) -> tuple[float, float | None]:
    """Spawn `command`, send `initialize`: (ms until its answer arrived, the server's CPU ms by then)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(initialize)
    proc.stdin.flush()
    answer = _read_answer(proc.stdout, 1)
    elapsed = (time.perf_counter() - start) * 1000
    cpu = _cpu_ms(proc.pid)
    assert "capabilities" in answer.get("result", {}), answer
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.flush()
    _read_answer(proc.stdout, 2)
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed, cpu


def start_up(starts: int, smoke: bool = False) -> None:
    """Start → initialize answer: ours (console script, `python -m`) and a bare pygls server in turn."""
    servers = {"bare pygls server": BARE_SERVER, "python -m deepseek_ls serve": SERVER}
    if SCRIPT.exists():
        servers["deepseek-ls serve (console script)"] = [str(SCRIPT), "serve", "--stdio"]
    else:
        print(f"# no console script at {SCRIPT}: measuring `python -m` only")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        # What an editor's environment holds (see the docstring): no log level, bytecode caches written.
        env = {key: value for key, value in os.environ.items()
               if key not in ("DEEPSEEK_LS_LOG", "PYTHONDONTWRITEBYTECODE")}
        env.update(DEEPSEEK_BASE_URL="http://127.0.0.1:9", DEEPSEEK_API_KEY="bench")
        converter = default_converter()
        initialize = _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": from_fs_path(str(root)),
            "capabilities": converter.unstructure(client_capabilities("visual-studio-code"))}})
        for command in servers.values() if not smoke else ():  # warm-up: bytecode written, files in the OS cache
            start_once(command, initialize, env, root)
        cached = Path(importlib.util.cache_from_source(str(Path(deepseek_ls.__file__).with_name("__main__.py"))))
        if not cached.exists() and not smoke:
            print(f"# WARNING: no bytecode cache ({cached}): our modules compile from source on every start")
        loads = [os.getloadavg()[0]]
        wall: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(starts):
            for name, command in servers.items():
                elapsed, used = start_once(command, initialize, env, root)
                wall[name].append(elapsed)
                if used is not None:
                    cpu[name].append(used)
        loads.append(os.getloadavg()[0])
    base = "bare pygls server"
    print(f"start -> initialize answer: {starts} starts of each server, in turn; "
          f"1-min load {loads[0]:.1f} at the start, {loads[1]:.1f} at the end")
    for name in servers:
        ms, bare = wall[name], wall[base]
        # Judged: the median over rounds of ours / the bare server's start in the same round (the load
        # drifts between rounds much more than between two starts of one round).
        paired = statistics.median(ours / theirs for ours, theirs in zip(ms, bare))
        line = (f"  {name:<36} median {statistics.median(ms):7.1f} ms  range {min(ms):7.1f}-{max(ms):7.1f} ms"
                f"  ratio: in-round median {paired:4.2f}, of medians {statistics.median(ms) / statistics.median(bare):4.2f},"
                f" of bests {min(ms) / min(bare):4.2f}")
        if cpu[name] and cpu[base]:
            line += (f" | CPU by the answer median {statistics.median(cpu[name]):6.0f} ms"
                     f" ratio {statistics.median(cpu[name]) / statistics.median(cpu[base]):4.2f}")
        if name != base and not smoke:
            line += (f" | target <= 1.2x bare pygls: {'OK' if paired <= 1.2 else 'MISSED'};"
                     f" p95 {pct(ms, 0.95):.0f} ms, target < 400 ms: {'OK' if pct(ms, 0.95) < 400 else 'MISSED'}")
        print(line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--starts", type=int, default=20, help="starts of each server (start-up)")
    parser.add_argument("--starts-only", action="store_true", help="measure start-up only")
    parser.add_argument("--hunks", type=int, default=HUNKS, help="hunks of the staged patch (at most 61)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, requests=4, starts=1, hunks=4)
    if not args.starts_only:
        asyncio.run(main(args.requests, args.hunks))
    start_up(args.starts, smoke=args.smoke)
