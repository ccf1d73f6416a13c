"""Git tools (read-only): `git.status`, `git.diff`, `git.show`, `repo.info`.

Each runs the `git` binary through `policy/git_safety.py` — fixed git directory and
work tree, every program the repository's configuration names switched off (fsmonitor,
filters, textconv, external diff, pager, hooks, helpers) — bounded by
`policy.command_timeout_seconds` and `policy.max_output_bytes` (`tools/proc.py`), and
inside the OS sandbox when it works, so a hostile repository cannot make a read run a
program. A git that could not run, was killed or took too long is an error, never an empty
status, diff or "no commits yet" (`policy/launch.py`).
"""

from __future__ import annotations

import asyncio
import functools
import platform
import re
import subprocess
import sys

from pydantic import BaseModel, Field

from deepseek_ls.policy.command_secrets import git_exclude_pathspecs
from deepseek_ls.policy.diff_secrets import blob_kinds, hide_secret_diffs
from deepseek_ls.policy.git_safety import GitError, SafeGit, UnsafeRepository, prepare
from deepseek_ls.policy.launch import ProgramNotRun, killed_by
from deepseek_ls.policy.redact import cut_head
from deepseek_ls.policy.secret_files import check_not_secret, file_is_secret
from deepseek_ls.tools.proc import run_bounded
from deepseek_ls.tools.registry import Tool, ToolContext

_REV = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./~^@{}+-]*$")


class NoArgs(BaseModel):
    pass


class DiffArgs(BaseModel):
    staged: bool = Field(default=False, description="diff the index against HEAD instead of the work tree")
    rev: str | None = Field(default=None, description="compare against this revision, e.g. HEAD~1 or main")
    paths: list[str] = Field(default_factory=list, description="limit to these workspace-relative paths")
    context_lines: int | None = Field(default=None, ge=0, le=200, description="unchanged lines around each change")


class ShowArgs(BaseModel):
    rev: str = Field(default="HEAD", description="a commit, branch or tag")
    path: str = Field(description="workspace-relative path of the file to show at that revision")


class GitOutput:
    def __init__(self, code: int | None, out: bytes, err: bytes, truncated: bool) -> None:
        self.code, self.out, self.err, self.truncated = code, out, err, truncated

    def text(self) -> str:
        return self.out.decode("utf-8", "replace")


async def _prepare(ctx: ToolContext) -> SafeGit:
    try:
        safe = await asyncio.to_thread(prepare, ctx.root)
    except UnsafeRepository as error:
        raise ValueError(f"git is not run on this workspace: {error}") from None
    except GitError as error:
        raise ValueError(str(error)) from None
    except subprocess.TimeoutExpired as error:
        raise ValueError(f"git took more than {error.timeout:g} s to read the repository's configuration") from None
    if safe is None or safe.location.worktree != ctx.root.resolve():
        raise ValueError("the workspace is not a git repository (its top level)")
    return safe


async def _git(ctx: ToolContext, safe: SafeGit, *args: str, check: bool = True, max_bytes: int | None = None) -> GitOutput:
    """One bounded git run (sandboxed when the sandbox works). `check`: a failure is an error; a git
    that could not run or was killed is one either way (its status would be read as an answer)."""
    cap = max_bytes or ctx.config.policy.max_output_bytes
    timeout = ctx.config.policy.command_timeout_seconds
    argv = safe.argv(*args)
    sandboxed = ctx.sandbox is not None and (await ctx.sandbox.astatus()).available
    rewrap = functools.partial(ctx.sandbox.wrap, argv, cwd=safe.cwd) if sandboxed else None
    result = await run_bounded(rewrap() if rewrap else argv, cwd=safe.cwd, env=safe.env, timeout=timeout,
                               max_output_bytes=cap, sandboxed=sandboxed, rewrap=rewrap)
    if result.timed_out:
        raise ValueError(f"git {args[0]} took more than {timeout:g} s and was stopped")
    signal = killed_by(result.exit_code, sandboxed=sandboxed)
    if signal is not None:
        raise ProgramNotRun("git", f"`git {args[0]}` was killed by {signal}", "try again")
    if check and result.exit_code != 0:
        why = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError(f"git {args[0]} failed: {why[-1] if why else f'exit {result.exit_code}'}")
    return GitOutput(result.exit_code, result.stdout, result.stderr, result.stdout_omitted > 0)


def _check_rev(rev: str) -> str:
    if not _REV.match(rev) or ".." in rev.split("/"):
        raise ValueError(f"{rev!r} is not an acceptable revision (letters, digits and _./~^@{{}}+- only, not starting with '-')")
    return rev


def _cap(ctx: ToolContext, text: str) -> tuple[str, bool]:
    cap = ctx.config.policy.max_output_bytes
    raw = text.encode("utf-8", "replace")
    if len(raw) <= cap:
        return text, False
    return cut_head(text, cap), True


async def _branch(ctx: ToolContext, safe: SafeGit) -> str | None:
    out = await _git(ctx, safe, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    return out.text().strip() or None if out.code == 0 else None


async def git_status(ctx: ToolContext, args: NoArgs) -> dict:
    safe = await _prepare(ctx)
    out = await _git(ctx, safe, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all")
    entries = []
    items = [x for x in out.text().split("\0") if x]
    i = 0
    while i < len(items):
        item = items[i]
        code, path = item[:2], item[3:]
        entry = {"path": path, "index": code[0], "worktree": code[1]}
        if code[0] in "RC":  # rename: the next item is the source path
            i += 1
            entry["from"] = items[i] if i < len(items) else ""
        if not path.startswith(".deepseek/"):
            entries.append(entry)
        i += 1
    return {"branch": await _branch(ctx, safe), "entries": entries, "clean": not entries,
            **({"truncated": True} if out.truncated else {})}


async def git_diff(ctx: ToolContext, args: DiffArgs) -> dict:
    paths = [ctx.paths.relative(p) for p in args.paths]
    safe = await _prepare(ctx)
    argv = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"]
    if args.staged:
        argv.append("--cached")
    if args.rev:
        argv.append(_check_rev(args.rev))
    if args.context_lines is not None:
        argv.append(f"-U{args.context_lines}")
    # Secret locations never appear, whatever the paths asked for: exclude pathspecs for
    # the deny-list, and for changed files whose content is a credential file.
    excludes = git_exclude_pathspecs(ctx.paths.deny_patterns)
    pathspecs = ["--", *(paths or [":/"]), *excludes]
    listing = await _git(ctx, safe, *argv, "--name-only", "-z", *pathspecs, max_bytes=4 * 1024 * 1024)
    names = listing.text().split("\0")
    hidden = [n for n in names if n and await asyncio.to_thread(file_is_secret, ctx.root, n)]
    pathspecs += [f":(exclude,literal){n}" for n in hidden]
    out = await _git(ctx, safe, *argv, *pathspecs)
    text, truncated = _cap(ctx, out.text())
    # The work tree's content is checked above; the other side (a revision, the index: a secret
    # file deleted or replaced since) by the blobs each section names.
    text, by_blob = await asyncio.to_thread(hide_secret_diffs, text, lambda ids: blob_kinds(safe, ids))
    hidden += [n for n in by_blob if n not in hidden]
    return {"diff": text, "truncated": truncated or out.truncated,
            **({"hidden_secret_files": hidden} if hidden else {})}


async def git_show(ctx: ToolContext, args: ShowArgs) -> dict:
    rev = _check_rev(args.rev)
    path = ctx.paths.relative(args.path)
    safe = await _prepare(ctx)
    cap = ctx.config.policy.max_output_bytes
    kind = await _git(ctx, safe, "cat-file", "-t", f"{rev}:{path}", check=False)
    if kind.code != 0 or kind.text().strip() != "blob":
        raise ValueError(f"{path} does not exist at {rev}")
    # Twice the cap: the head is shown, the whole of it is checked for a credential file.
    out = await _git(ctx, safe, "cat-file", "blob", f"{rev}:{path}", max_bytes=2 * cap)
    data = out.out if not out.truncated else out.out[:cap]
    try:
        text = data.decode("utf-8") if not out.truncated else data.decode("utf-8", "ignore")
    except UnicodeDecodeError:
        raise ValueError(f"{path} at {rev} is not UTF-8 text") from None
    if "\0" in text:
        raise ValueError(f"{path} at {rev} is not UTF-8 text")
    check_not_secret(f"{rev}:{path}", text)
    content, truncated = _cap(ctx, text)
    return {"rev": rev, "path": path, "content": content, "truncated": truncated or out.truncated}


async def repo_info(ctx: ToolContext, args: NoArgs) -> dict:
    info: dict = {
        "root": str(ctx.root),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "git": False,
    }
    try:
        safe = await asyncio.to_thread(prepare, ctx.root)
    except UnsafeRepository as error:
        return {**info, "git_refused": str(error)}
    if safe is None or safe.location.worktree != ctx.root.resolve():
        return info
    info["git"] = True
    head = await _git(ctx, safe, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    info["head"] = head.text().strip() if head.code == 0 else None  # None: no commits yet
    info["branch"] = await _branch(ctx, safe) if info["head"] else None
    status = await _git(ctx, safe, "status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all")
    info["dirty"] = bool(status.out.strip())
    return info


TOOLS = [
    Tool("git.status", "Git status of the workspace: branch and changed files.", NoArgs, git_status),
    Tool(
        "git.diff",
        "Git diff of the work tree (or the index with staged=true), optionally against a revision.",
        DiffArgs,
        git_diff,
    ),
    Tool("git.show", "The content of a file at a git revision (rev:path).", ShowArgs, git_show),
    Tool("repo.info", "Workspace root, platform, and whether git is present (head, branch, dirty).", NoArgs, repo_info),
]
