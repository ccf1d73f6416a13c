"""`bash.run` and `run_command`: allowlisted commands, without a shell, bounded.

Despite its name `bash.run` does not start bash: the command line is checked
by `CommandPolicy` and executed as an argv inside the OS sandbox
(`policy/sandbox.py`), with a timeout (the sandbox's PID namespace dies with
it), stdout/stderr truncated to `policy.max_output_bytes`, and an environment
scrubbed of variables whose names look like credentials. An unsafe command
shape, or no working sandbox, needs an explicit approval in every mode.
"""

from __future__ import annotations

import asyncio
import functools
import shlex
import uuid
from pathlib import Path

from pydantic import BaseModel, Field

from deepseek_ls.patch.command_changes import watched
from deepseek_ls.policy.command_secrets import guard_command
from deepseek_ls.policy.diff_secrets import blob_kinds, hide_secret_diffs, looks_like_patch
from deepseek_ls.policy.env import command_exec_path, host_exec_path, resolve_program, scrubbed_env
from deepseek_ls.policy.redact import cut_head, cut_tail
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.git_safety import UnsafeRepository, harden_command, is_git_command, prepare
from deepseek_ls.policy.launch import killed_by
from deepseek_ls.policy.approvals import command_review
from deepseek_ls.policy.sandbox import NO_SANDBOX, Sandbox
from deepseek_ls.tools import proc
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
    killed_by: str | None = None  # the signal that ended it ("SIGKILL"), when one did
    duration_ms: float


async def run_command(
    argv: list[str], *, cwd: Path, timeout: float, max_output_bytes: int, sandbox: Sandbox | None = None
) -> CommandResult:
    """Run an already policy-checked (and, where needed, approved) argv. Confined by `sandbox` when it
    is given and available. Never raises for the command's own failure; every wait is bounded.
    Raises `ProgramNotRun` when its program could not run at all (missing, not executable, hidden
    by the sandbox): that is no exit status of the command's (`policy/launch.py`).

    A command whose program is git runs hardened by `policy/git_safety.py` (sandboxed or not): the
    repository's program-valued settings (fsmonitor, filters, textconv, ...) are switched off, so
    approving or allowlisting `git status` never also runs a program the repository names. Raises
    `PolicyViolation` (rule `unsafe_repository`) instead of running git on a repository git_safety
    refuses."""
    env = scrubbed_env()
    run_argv = argv
    workspace = sandbox.root if sandbox is not None else cwd
    # What the command starts looks names up on this PATH too: of the workspace's directories only a
    # virtualenv's bin stays, and the sandbox shows only its vetted programs (policy/sandbox_venv.py).
    env["PATH"] = command_exec_path(env.get("PATH"), workspace=workspace)
    if not is_git_command(argv):
        # From a PATH directory inside the workspace only a virtualenv's python and pip's entry points
        # run (an activated project venv's pytest); a planted `rg` there is passed over (policy/env.py).
        program = resolve_program(argv[0], env.get("PATH"), workspace=workspace)
        if program is not None:
            run_argv = [program, *argv[1:]]
        else:  # not found where it may come from: nor may the sandbox's own lookup find it in the workspace
            env["PATH"] = host_exec_path(env.get("PATH", ""), workspace=workspace)
    if is_git_command(argv):
        try:
            run_argv, env = await asyncio.to_thread(harden_command, argv, cwd, env)
        except UnsafeRepository as error:
            # The subject stays short: `guard_command` may have appended many exclude pathspecs.
            subject = shlex.join(argv[:2])
            raise PolicyViolation(subject, "unsafe_repository", f"git is not run on this repository: {error}") from None
    sandboxed = sandbox is not None and (await sandbox.astatus()).available
    if sandboxed:
        env["TMPDIR"] = "/tmp"
    rewrap = functools.partial(sandbox.wrap, run_argv, cwd=cwd, exec_path=env.get("PATH")) if sandboxed else None
    out = await proc.run_bounded(rewrap() if rewrap else run_argv, cwd=cwd, env=env, timeout=timeout,
                                 max_output_bytes=max_output_bytes, sandboxed=sandboxed, rewrap=rewrap)
    stdout = _text(out.stdout, out.stdout_omitted, max_output_bytes)
    stderr = _text(out.stderr, out.stderr_omitted, max_output_bytes)
    if is_git_command(argv) and looks_like_patch(stdout):
        # A credential file with an ordinary name (no exclude pathspec knows it) is hidden by content.
        stdout = await asyncio.to_thread(_hide_secret_diffs, stdout, cwd, env)
    return CommandResult(
        argv=argv,
        exit_code=out.exit_code,
        stdout=stdout,
        stderr=stderr,
        truncated=bool(out.stdout_omitted or out.stderr_omitted),
        timed_out=out.timed_out,
        killed_by=killed_by(out.exit_code, sandboxed=sandboxed),
        duration_ms=out.duration_ms,
    )


def _hide_secret_diffs(text: str, cwd: Path, env: dict[str, str]) -> str:
    try:
        safe = prepare(cwd, env)
    except UnsafeRepository:
        safe = None
    if safe is None:
        return hide_secret_diffs(text, lambda ids: {blob: "unknown" for blob, _ in ids})[0]
    return hide_secret_diffs(text, lambda ids: blob_kinds(safe, ids))[0]


def _text(data: bytes, omitted: int, cap: int) -> str:
    if not omitted:
        return data.decode("utf-8", "replace")
    # Head and tail were kept: test runners put the summary at the end.
    half = max(cap // 2, 1)
    # Neither side keeps the word the cut split (a secret in two halves is not recognised by redaction).
    head = cut_head(data[:half].decode("utf-8", "ignore"), half, cut_inside=True)
    tail = cut_tail(data[half:].decode("utf-8", "ignore"))
    return f"{head}\n... [{omitted} bytes truncated] ...\n{tail}"


async def bash_run(ctx: ToolContext, args: BashArgs) -> dict:
    checked = ctx.commands.inspect(args.cmd)
    cwd = ctx.root if args.cwd in ("", ".") else ctx.paths.resolve(args.cwd)
    if not cwd.is_dir():
        raise ValueError(f"cwd {args.cwd!r} is not a directory")
    timeout = min(args.timeout or ctx.config.policy.command_timeout_seconds, ctx.config.policy.command_timeout_seconds)
    status = await ctx.sandbox.astatus() if ctx.sandbox is not None else NO_SANDBOX
    reasons = command_review(checked, status)
    ctx.sink.emit(
        "PolicyDecision@v1",
        {
            "subject": f"bash.run: {args.cmd}",
            "allowed": True,
            "rule": "allowlist",
            "reason": f"matches {checked.matched_prefix!r}" + (f"; needs explicit approval: {'; '.join(reasons)}" if reasons else ""),
        },
    )
    request = ApprovalRequest(
        request_id=str(uuid.uuid4()),
        kind="bash.run",
        title=f"Run: {args.cmd}",
        detail=f"in {args.cwd or '.'} (timeout {timeout:g}s)" + "".join(f"\n- {r}" for r in reasons)
        + "".join(f"\n- {w}; its changes are not shown as a patch to review" for w in checked.writes),
        command=args.cmd,
    )
    await ctx.approve(request, force_explicit=bool(reasons), changes_files=bool(checked.writes), tool="bash.run")
    argv = guard_command(checked.argv, cwd=cwd, paths=ctx.paths)  # secret paths in arguments
    # What it changes is kept as a checkpoint: a rewind takes it out like an apply (patch/command_changes.py).
    result = await watched(ctx.patches, args.cmd, ctx.session_id, ctx.sink, lambda: run_command(
        argv, cwd=cwd, timeout=timeout, max_output_bytes=ctx.config.policy.max_output_bytes, sandbox=ctx.sandbox
    ))
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
