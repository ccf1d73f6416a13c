"""`bash.run` and `run_command`: allowlisted commands, without a shell, bounded.

Despite its name `bash.run` does not start bash: the command line is checked
by `CommandPolicy` and executed as an argv, with a timeout (the whole process
group is killed), stdout/stderr truncated to `policy.max_output_bytes`, and an
environment scrubbed of variables whose names look like credentials.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

from pydantic import BaseModel, Field

from deepseek_ls.policy.command_secrets import guard_command
from deepseek_ls.policy.env import scrubbed_env
from deepseek_ls.tools.registry import Tool, ToolContext
from deepseek_ls.ui_port import ApprovalRequest



class BashArgs(BaseModel):
    cmd: str = Field(min_length=1, description="the command line, e.g. 'pytest -q tests/test_app.py'")
    cwd: str = Field(default=".", description="workspace-relative working directory")
    timeout: float | None = Field(default=None, gt=0, description="seconds (default: policy.command_timeout_seconds)")


class CommandResult(BaseModel):
    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    truncated: bool = False
    timed_out: bool = False
    duration_ms: float


async def run_command(argv: list[str], *, cwd: Path, timeout: float, max_output_bytes: int) -> CommandResult:
    """Run an already policy-checked argv. Never raises for the command's own failure."""
    start = time.perf_counter()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=scrubbed_env(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise FileNotFoundError(f"{argv[0]!r} is not installed or not on PATH") from None
    timed_out = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    except asyncio.TimeoutError:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = await proc.communicate()
    stdout, t1 = _truncate(out, max_output_bytes)
    stderr, t2 = _truncate(err, max_output_bytes)
    return CommandResult(
        argv=argv,
        exit_code=None if timed_out else proc.returncode,
        stdout=stdout,
        stderr=stderr,
        truncated=t1 or t2,
        timed_out=timed_out,
        duration_ms=(time.perf_counter() - start) * 1000,
    )


def _truncate(data: bytes, cap: int) -> tuple[str, bool]:
    if len(data) <= cap:
        return data.decode("utf-8", "replace"), False
    # Keep the head and the tail: test runners put the summary at the end.
    half = cap // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[-half:].decode("utf-8", "ignore")
    return f"{head}\n... [{len(data) - 2 * half} bytes truncated] ...\n{tail}", True


async def bash_run(ctx: ToolContext, args: BashArgs) -> dict:
    checked = ctx.commands.inspect(args.cmd)
    cwd = ctx.root if args.cwd in ("", ".") else ctx.paths.resolve(args.cwd)
    if not cwd.is_dir():
        raise ValueError(f"cwd {args.cwd!r} is not a directory")
    timeout = min(args.timeout or ctx.config.policy.command_timeout_seconds, ctx.config.policy.command_timeout_seconds)
    ctx.sink.emit(
        "PolicyDecision@v1",
        {
            "subject": f"bash.run: {args.cmd}",
            "allowed": True,
            "rule": "allowlist",
            "reason": f"matches {checked.matched_prefix!r}",
        },
    )
    request = ApprovalRequest(
        request_id=str(uuid.uuid4()),
        kind="bash.run",
        title=f"Run: {args.cmd}",
        detail=f"in {args.cwd or '.'} (timeout {timeout:g}s)",
        command=args.cmd,
    )
    await ctx.approve(request, tool="bash.run")
    argv = guard_command(checked.argv, cwd=cwd, paths=ctx.paths)  # secret paths in arguments
    result = await run_command(argv, cwd=cwd, timeout=timeout, max_output_bytes=ctx.config.policy.max_output_bytes)
    return result.model_dump()


TOOLS = [
    Tool(
        "bash.run",
        "Run an allowlisted command (tests, linters, git status) in the workspace, without a shell, after approval. "
        "Pipes, redirection, chaining and variable expansion are refused.",
        BashArgs,
        bash_run,
        effect="exec",
    )
]
