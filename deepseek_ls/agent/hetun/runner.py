"""Run a checked helper block in its own sandboxed process and serve its helper calls.

The child (`child.py`) runs under bubblewrap (`policy/sandbox.py`: no network,
its own PID namespace, secrets masked) with the workspace bound read-only, and
with resource limits it sets on itself before the block runs. Helpers that
need the workspace or the model are served here, by the parent, through the
`HelperHost` — the same tool host (path policy, secret files, redaction) and
the same LLM client as every other call, each recorded in the session's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Protocol

from deepseek_ls.agent.hetun.validate import HELPERS_PARENT, HelperBlockRejected, prepare
from deepseek_ls.config_models import HetunHelperConfig
from deepseek_ls.policy.launch import ProgramNotRun
from deepseek_ls.policy.redact import redact_obj
from deepseek_ls.tools import proc as proc_io

CHILD = Path(__file__).with_name("child.py")
MAX_LINE = 2_000_000  # bytes of one protocol line from the child


class HelperHost(Protocol):
    async def serve(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any: ...


@dataclass
class HelperRun:
    ok: bool
    result: Any = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    error: str | None = None
    calls: int = 0
    duration_ms: float = 0.0


class HelperUnavailable(RuntimeError):
    """No helper block can run here (no OS sandbox while one is required)."""


def child_argv() -> list[str]:
    # -I: no environment, no user site, no cwd on sys.path; -S: no site-packages at all; -B: no .pyc writes.
    return [sys.executable, "-I", "-S", "-B", str(CHILD)]


async def run_block(
    code: str,
    host: HelperHost,
    config: HetunHelperConfig,
    *,
    sandbox: Any | None,
    spawn: Callable[[list[str]], Awaitable[asyncio.subprocess.Process]] | None = None,
) -> HelperRun:
    """Check `code`, run it confined, serve its helper calls through `host`; never raises for the block's faults."""
    started = time.perf_counter()
    try:
        source = prepare(code, max_bytes=config.max_code_bytes)
    except HelperBlockRejected as exc:
        return HelperRun(ok=False, error=f"rejected: {exc}")
    argv = child_argv()
    sandboxed = False
    if sandbox is not None:
        status = await sandbox.astatus()
        if status.available:
            argv, sandboxed = sandbox.wrap(argv, read_only=True), True
        elif config.require_sandbox:
            raise HelperUnavailable(f"helper block not run: {status.describe()} "
                                    "(hetun.helper.require_sandbox = true)")
    elif config.require_sandbox:
        raise HelperUnavailable("helper block not run: no OS sandbox configured (hetun.helper.require_sandbox = true)")
    run = HelperRun(ok=False)
    try:
        proc = await (spawn or functools.partial(_spawn, sandboxed=sandboxed))(argv)
    except ProgramNotRun as exc:
        run.error = f"the helper block could not start: {exc}"
        return run
    # stderr is read only to tell the sandbox's own failure (it never started the child) from the child's end.
    errors = proc_io.Capped(4000)
    err_task = asyncio.ensure_future(proc_io.drain(proc.stderr, errors))
    try:
        await asyncio.wait_for(_converse(proc, source, host, config, run), config.timeout_seconds)
    except asyncio.TimeoutError:
        run.ok, run.error = False, f"the helper block ran longer than {config.timeout_seconds:g}s and was stopped"
    finally:
        await _stop(proc)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(err_task, proc_io.PIPE_GRACE_SECONDS)
        err_task.cancel()
    if not run.ok:
        try:
            proc_io.check_ran(argv, proc.returncode, b"", errors.value(), sandboxed=sandboxed)
        except ProgramNotRun as exc:
            run.error = f"the helper block could not start: {exc}"
    run.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    return run


async def _spawn(argv: list[str], *, sandboxed: bool) -> asyncio.subprocess.Process:
    return await proc_io.spawn(argv, cwd=None, env={"PATH": os.defpath, "LANG": "C.UTF-8"}, sandboxed=sandboxed,
                               stdin=asyncio.subprocess.PIPE, limit=MAX_LINE)


async def _converse(proc: asyncio.subprocess.Process, source: str, host: HelperHost,
                    config: HetunHelperConfig, run: HelperRun) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    limits = {"memory_mb": config.memory_mb, "cpu_seconds": config.cpu_seconds,
              "max_loop_iterations": config.max_loop_iterations}
    await _send(proc, {"code": source, "limits": limits, "remote": list(HELPERS_PARENT)})
    while True:
        try:
            line = await proc.stdout.readline()
        except (ValueError, asyncio.LimitOverrunError):
            run.error = "the helper block sent a message larger than allowed"
            return
        if not line:
            code = await proc.wait()
            run.error = run.error or _exit_reason(code)
            return
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError:
            run.error = "the helper block's process sent something that is not a protocol message"
            return
        if "done" in message:
            run.findings = _findings(message.get("findings"))
            run.output = [str(x)[:500] for x in (message.get("output") or [])][:200]
            if message.get("done") is True:
                result = message.get("result")
                encoded = json.dumps(result, ensure_ascii=False, default=str)
                if len(encoded.encode("utf-8")) > config.max_result_bytes:
                    result = encoded[: config.max_result_bytes] + " …(cut)"
                run.ok, run.result = True, redact_obj(result)
            else:
                run.error = str(message.get("error") or "the helper block failed")[:1000]
            return
        name = message.get("call")
        run.calls += 1
        if run.calls > config.max_calls:
            await _send(proc, {"ok": False, "error": f"helper call limit reached ({config.max_calls})"})
            continue
        if name not in HELPERS_PARENT:
            await _send(proc, {"ok": False, "error": f"unknown helper {name!r}"})
            continue
        args = message.get("args") if isinstance(message.get("args"), list) else []
        kwargs = message.get("kwargs") if isinstance(message.get("kwargs"), dict) else {}
        try:
            value = await host.serve(name, args, kwargs)
            reply = {"ok": True, "value": redact_obj(value)}
        except Exception as exc:  # noqa: BLE001 - the block sees the refusal as its helper's error
            reply = {"ok": False, "error": str(redact_obj(str(exc)))[:1000]}
        await _send(proc, reply)


def _findings(raw: Any) -> list[dict[str, Any]]:
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict):
            try:
                relevance = max(0.0, min(1.0, float(item.get("relevance", 0.5))))
            except (TypeError, ValueError):
                relevance = 0.5
            out.append({"text": str(redact_obj(str(item.get("text", ""))))[:500], "relevance": relevance})
    return out[:50]


def _exit_reason(code: int | None) -> str:
    signum = -code if code is not None and code < 0 else code - 128 if code is not None and code > 128 else None
    if signum is not None:  # killed directly (negative) or reported by bwrap as 128 + the signal
        import signal

        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        why = {"SIGXCPU": "its CPU time limit", "SIGKILL": "a resource limit"}.get(name, name)
        return f"the helper block was stopped by {why}"
    return f"the helper block's process ended without an answer (exit {code})"


async def _send(proc: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write((json.dumps(message, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
        await proc.stdin.drain()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5)
