"""Bounded subprocess runs: every wait has a deadline, every pipe is drained.

`run_bounded` starts a process in its own process group, reads stdout and
stderr concurrently into bounded buffers (the head and the tail are kept, so a
test runner's summary at the end survives), and kills the whole group on
timeout or cancellation. `stop` ends a process that was started for streaming
(e.g. `rg`): kill, drain what is left in its pipes, reap — each step bounded,
so a child that ignores signals or a pipe held open by a grandchild can never
hang the caller.

A program that could not run never passes for one that ran and said nothing: `spawn` checks it on
the host first and turns a failed exec into `ProgramNotRun`, and `check_ran` (which `run_bounded`
applies) recognises the OS sandbox's own failure after the run (`policy/launch.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.policy.launch import ProgramNotRun, check_program, exec_error, program_of, sandbox_failure

__all__ = ["ProcessOutput", "ProgramNotRun", "check_ran", "run_bounded", "spawn", "stop"]

log = logging.getLogger(__name__)

# After a kill, how long to wait for the pipes to close and the process to be reaped.
KILL_GRACE_SECONDS = 5.0
# After the process exited, how long its pipes may stay open (held by a descendant) before we stop reading.
PIPE_GRACE_SECONDS = 1.0
_CHUNK = 65536


@dataclass
class ProcessOutput:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_omitted: int
    stderr_omitted: int
    timed_out: bool
    duration_ms: float


class Capped:
    """Keeps the first and the last `cap // 2` bytes of a stream, counting the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.cap - len(self.head)
        if room > 0 and not self.tail:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.cap:
                del self.tail[: len(self.tail) - self.cap]

    def value(self) -> bytes:
        """Everything when it fit; else the first and last `cap // 2` bytes joined (see `omitted`)."""
        known = bytes(self.head + self.tail)
        if self.total <= self.cap:
            return known
        if self.total == len(known):
            return known[: self.half] + known[-self.half:]
        return bytes(self.head[: self.half]) + bytes(self.tail[-self.half:])

    @property
    def omitted(self) -> int:
        return max(self.total - 2 * self.half, 0) if self.total > self.cap else 0


async def drain(stream: asyncio.StreamReader | None, sink: Capped | None) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return
        if sink is not None:
            sink.add(chunk)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write `data` to the process's stdin and close it; a process that exits first is no error."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
        proc.stdin.close()


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group `proc` leads (it was started with start_new_session); also after
    the leader exited, for what it left running in its group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()


async def wait_exit(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether `proc` exited within `timeout`. Unlike `proc.wait()`, this does not also wait for its
    pipes to close (asyncio wakes `wait()` only then, so a child holding stdout would hang it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    waiter = asyncio.ensure_future(proc.wait())
    interval = 0.005
    try:
        while proc.returncode is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            # The usual case: the pipes close with the process and the waiter fires at once;
            # polling the return code covers a pipe held open by a descendant.
            await asyncio.wait({waiter}, timeout=min(interval, remaining))
            interval = min(interval * 2, 0.25)
        return True
    finally:
        waiter.cancel()
        with contextlib.suppress(BaseException):
            await waiter


def close(proc: asyncio.subprocess.Process) -> None:
    """Close the transport (its pipes): nothing is read any more."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def spawn(argv: list[str], *, cwd: Path | None, env: dict[str, str] | None, sandboxed: bool = False,
                stdin: int = asyncio.subprocess.DEVNULL, limit: int = 2**16) -> asyncio.subprocess.Process:
    """Start `argv` with piped stdout/stderr (no stdin unless asked), in a new session (its own process
    group). `sandboxed`: `argv` is a `Sandbox.wrap` command line. Raises `ProgramNotRun` when the
    program (the sandboxed one, or bwrap) is not there or cannot be executed."""
    path = (os.environ if env is None else env).get("PATH")
    check_program(program_of(argv, sandboxed=sandboxed), path)
    if sandboxed:
        check_program(argv[0], path)
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=limit,
        )
    except OSError as error:
        if isinstance(error, FileNotFoundError) and cwd is not None and not Path(cwd).is_dir():
            raise  # the working directory went away: not the program's fault
        raise exec_error(argv[0], error) from None


def check_ran(argv: list[str], exit_code: int | None, stdout: bytes, stderr: bytes, *, sandboxed: bool) -> None:
    """Raise `ProgramNotRun` when a run that ended with `exit_code` was the sandbox failing to start
    the program, not the program's own answer."""
    if sandboxed:
        failure = sandbox_failure(program_of(argv, sandboxed=True), exit_code, stdout, stderr)
        if failure is not None:
            raise failure


async def stop(
    process: asyncio.subprocess.Process,
    *,
    kill: bool = True,
    drains: list[asyncio.Future] | None = None,
    grace: float | None = None,
) -> None:
    """End `process`: kill its group (unless `kill` is False: it is finishing by itself), drain its
    pipes (`drains`: readers the caller already runs, else fresh ones that discard) and reap it.
    Each step is bounded by `grace`; a stuck process is killed, a stuck pipe closed."""
    grace = KILL_GRACE_SECONDS if grace is None else grace
    if kill:
        kill_group(process)
    if drains is None:
        drains = [asyncio.ensure_future(drain(process.stdout, None)), asyncio.ensure_future(drain(process.stderr, None))]
    if not await wait_exit(process, grace):
        kill_group(process)
        await wait_exit(process, grace)
    await _settle(process, drains, grace)


async def _settle(process: asyncio.subprocess.Process, readers: list[asyncio.Future], grace: float) -> None:
    """After the process exited: let the readers finish what is in the pipes, bounded; then close."""
    gathered = asyncio.gather(*readers, return_exceptions=True)
    try:
        await asyncio.wait_for(asyncio.shield(gathered), grace)
    except asyncio.TimeoutError:
        pass  # a descendant outside the group holds a pipe: stop reading it
    finally:
        for task in readers:
            task.cancel()
        with contextlib.suppress(BaseException):
            await gathered
        close(process)


async def run_bounded(
    argv: list[str], *, cwd: Path, env: dict[str, str] | None, timeout: float, max_output_bytes: int,
    sandboxed: bool = False, stdin: bytes | None = None, rewrap: Callable[[], list[str]] | None = None,
) -> ProcessOutput:
    """Run `argv` to completion or `timeout`; never waits longer than timeout + 2 x KILL_GRACE_SECONDS
    + PIPE_GRACE_SECONDS. Cancelling the caller kills the process group. Raises `ProgramNotRun` when
    the program could not run (`sandboxed`: `argv` is a `Sandbox.wrap` command line). `stdin`: bytes
    written to the program's standard input, then closed (a program that never reads them does not
    hold the caller: the write is one of the bounded readers). `rewrap`: builds the sandbox's command
    line afresh; given, a start that failed on a path which vanished meanwhile is tried once more."""
    try:
        return await _run_once(argv, cwd=cwd, env=env, timeout=timeout, max_output_bytes=max_output_bytes,
                               sandboxed=sandboxed, stdin=stdin)
    except ProgramNotRun as error:
        if not (sandboxed and error.raced and rewrap is not None):
            raise
        log.info("the sandbox could not start %s (%s); trying once more", error.program, error.reason)
    return await _run_once(rewrap(), cwd=cwd, env=env, timeout=timeout, max_output_bytes=max_output_bytes,
                           sandboxed=sandboxed, stdin=stdin)


async def _run_once(
    argv: list[str], *, cwd: Path, env: dict[str, str] | None, timeout: float, max_output_bytes: int,
    sandboxed: bool, stdin: bytes | None,
) -> ProcessOutput:
    start = time.perf_counter()
    proc = await spawn(argv, cwd=cwd, env=env, sandboxed=sandboxed,
                       stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE)
    out, err = Capped(max_output_bytes), Capped(max_output_bytes)
    readers = [asyncio.ensure_future(drain(proc.stdout, out)), asyncio.ensure_future(drain(proc.stderr, err))]
    if stdin is not None:
        readers.append(asyncio.ensure_future(_feed(proc, stdin)))
    timed_out = False
    try:
        if not await wait_exit(proc, timeout):
            timed_out = True
            kill_group(proc)
            await wait_exit(proc, KILL_GRACE_SECONDS)
        kill_group(proc)  # what it left running in its group
    finally:
        if proc.returncode is None:  # cancelled, or unkillable within the grace
            kill_group(proc)
        await _settle(proc, readers, PIPE_GRACE_SECONDS)
    if not timed_out:
        check_ran(argv, proc.returncode, out.value(), err.value(), sandboxed=sandboxed)
    return ProcessOutput(
        exit_code=None if timed_out else proc.returncode,
        stdout=out.value(),
        stderr=err.value(),
        stdout_omitted=out.omitted,
        stderr_omitted=err.omitted,
        timed_out=timed_out,
        duration_ms=(time.perf_counter() - start) * 1000,
    )
