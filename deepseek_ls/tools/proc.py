"""Bounded subprocess runs: every wait has a deadline, every pipe is drained.

`run_bounded` starts a process in its own process group, reads stdout and
stderr concurrently into bounded buffers (the head and the tail are kept, so a
test runner's summary at the end survives), and kills the whole group on
timeout or cancellation. `stop` ends a process that was started for streaming
(e.g. `rg`): kill, drain what is left in its pipes, reap — each step bounded,
so a child that ignores signals or a pipe held open by a grandchild can never
hang the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

# After a kill, how long to wait for the pipes to close and the process to be reaped.
KILL_GRACE_SECONDS = 5.0
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


async def drain(stream: asyncio.StreamReader | None, sink: _Capped | None) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return
        if sink is not None:
            sink.add(chunk)


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group `proc` leads (it was started with start_new_session)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def spawn(argv: list[str], *, cwd: Path, env: dict[str, str] | None) -> asyncio.subprocess.Process:
    """Start `argv` with piped stdout/stderr, no stdin, in a new session (its own process group)."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise FileNotFoundError(f"{argv[0]!r} is not installed or not on PATH") from None


async def stop(
    process: asyncio.subprocess.Process,
    *,
    kill: bool = True,
    drains: list[asyncio.Future] | None = None,
    grace: float = KILL_GRACE_SECONDS,
) -> None:
    """End `process`: kill its group (unless `kill` is False: it is finishing by itself), drain its
    pipes (`drains`: readers the caller already runs, else fresh ones that discard) and reap it.
    Each step is bounded by `grace`; a stuck process is killed, a stuck pipe abandoned."""
    if kill:
        kill_group(process)
    if drains is None:
        drains = [asyncio.ensure_future(drain(process.stdout, None)), asyncio.ensure_future(drain(process.stderr, None))]
    gathered = asyncio.gather(*drains, return_exceptions=True)
    try:
        await asyncio.wait_for(asyncio.shield(gathered), grace)
    except asyncio.TimeoutError:
        kill_group(process)
        for task in drains:
            task.cancel()
        with contextlib.suppress(BaseException):
            await gathered
    try:
        await asyncio.wait_for(process.wait(), grace)
    except asyncio.TimeoutError:
        kill_group(process)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), grace)


async def run_bounded(
    argv: list[str], *, cwd: Path, env: dict[str, str] | None, timeout: float, max_output_bytes: int
) -> ProcessOutput:
    """Run `argv` to completion or `timeout`; never waits longer than timeout + 2 x KILL_GRACE_SECONDS."""
    start = time.perf_counter()
    proc = await spawn(argv, cwd=cwd, env=env)
    out, err = Capped(max_output_bytes), Capped(max_output_bytes)
    readers = asyncio.ensure_future(asyncio.gather(drain(proc.stdout, out), drain(proc.stderr, err)))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            kill_group(proc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), KILL_GRACE_SECONDS)
        # The process is gone; its pipes close unless a descendant outside the group holds them.
        try:
            await asyncio.wait_for(asyncio.shield(readers), KILL_GRACE_SECONDS)
        except asyncio.TimeoutError:
            kill_group(proc)
    finally:
        if proc.returncode is None:
            kill_group(proc)
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(proc.wait(), KILL_GRACE_SECONDS)
        if not readers.done():
            readers.cancel()
        with contextlib.suppress(BaseException):
            await readers
    return ProcessOutput(
        exit_code=None if timed_out else proc.returncode,
        stdout=out.value(),
        stderr=err.value(),
        stdout_omitted=out.omitted,
        stderr_omitted=err.omitted,
        timed_out=timed_out,
        duration_ms=(time.perf_counter() - start) * 1000,
    )
