"""File tools: `fs.read` and `fs.list`. Reads see open editor buffers first."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path

import pathspec
from pydantic import BaseModel, Field

from deepseek_ls.globs import gitignore_spec
from deepseek_ls.patch.hunks import split_lines
from deepseek_ls.policy import git_safety, safe_files
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.launch import ProgramNotRun
from deepseek_ls.policy.redact import cut_head
from deepseek_ls.policy.secret_files import check_not_secret
from deepseek_ls.tools.registry import Tool, ToolContext

MAX_LIST = 5000


class FsReadArgs(BaseModel):
    path: str = Field(description="workspace-relative path, e.g. src/app.py")
    start_line: int | None = Field(default=None, ge=1, description="first line to return (1-based)")
    end_line: int | None = Field(default=None, ge=1, description="last line to return (inclusive)")
    max_bytes: int = Field(default=100_000, gt=0, description="truncate the returned content to this many bytes")


class FsListArgs(BaseModel):
    glob: str = Field(default="**", description="gitignore-style pattern, e.g. 'src/**/*.py' or '*.md'")
    limit: int = Field(default=500, gt=0, le=MAX_LIST)


async def fs_read(ctx: ToolContext, args: FsReadArgs) -> dict:
    rel = ctx.paths.relative(args.path)
    doc = await asyncio.to_thread(ctx.overlay.get, rel)  # an ACP client's buffer is asked for from a thread
    if doc is None:
        text = await asyncio.to_thread(_read_disk, ctx, rel)
    else:
        # The buffer looked up once above gives both the text and its source/version.
        check_not_secret(rel, doc[0])
        text = doc[0]
    lines = split_lines(text)
    start = args.start_line or 1
    end = min(args.end_line or len(lines), len(lines))
    if start > max(len(lines), 1):
        raise ValueError(f"{rel} has {len(lines)} lines; start_line {start} is past the end")
    content = "".join(lines[start - 1 : end])
    cap = min(args.max_bytes, ctx.config.agent_loop.max_file_bytes)
    raw = content.encode("utf-8")
    truncated = len(raw) > cap
    if truncated:
        # Not inside a word: `max_bytes` is the model's choice, and a key cut one character short
        # is no longer recognised by redaction.
        content = cut_head(content, cap)
    return {
        "path": rel,
        "content": content,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "truncated": truncated,
        "start_line": start,
        "end_line": end,
        "total_lines": len(lines),
        "source": "buffer" if doc is not None else "disk",
        "version": doc[1] if doc is not None else None,
    }


def _read_disk(ctx: ToolContext, rel: str) -> str:
    """The file's text, read from the descriptor that was opened and checked (no-follow, one link),
    never from a path resolved earlier."""
    target = ctx.paths.resolve(rel)
    if target.is_dir():
        raise ValueError(f"{rel} is a directory; use fs.list to see its files")
    # A file over max_file_bytes can still be read by line range, but one ten times
    # larger is not loaded at all (generated data, logs, vendored bundles).
    size_cap = ctx.config.agent_loop.max_file_bytes
    try:
        fd = safe_files.open_read(ctx.root, rel)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"{rel} does not exist") from None
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > size_cap * 10:
            raise ValueError(f"{rel} is {size} bytes; too large to read (agent_loop.max_file_bytes={size_cap})")
        data = fh.read(size_cap * 10 + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{rel} is not UTF-8 text (binary file?)") from None
    check_not_secret(rel, text)
    return text


def workspace_files(root: Path) -> list[str]:
    """Every file in the workspace not ignored by git (gitignore rules), sorted."""
    return workspace_listing(root)[0]


def workspace_listing(root: Path) -> tuple[list[str], str | None]:
    """`workspace_files`, and why git could not list them when the files were walked instead
    (the walk reads every `.gitignore` too, but not git's global excludes)."""
    if (root / ".git").exists():
        try:  # with the repository's program-running settings off (policy/git_safety.py)
            safe = git_safety.prepare(root)
            proc = safe.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", check=False,
                            timeout=60) if safe is not None else None
        except git_safety.UnsafeRepository:
            proc = None  # e.g. a `.git` pointing at another repository: walk the files instead
        except (ProgramNotRun, git_safety.GitError, subprocess.TimeoutExpired) as exc:
            why = f"git took more than {exc.timeout:g} s" if isinstance(exc, subprocess.TimeoutExpired) else str(exc)
            return _walk(root), f"{why}; the files were listed by walking the workspace and its .gitignore files"
        if proc is not None and proc.returncode == 0:
            names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
            return sorted({n for n in names if (root / n).is_file()}), None
    return _walk(root), None


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    specs: dict[str, pathspec.PathSpec] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        ignore = Path(dirpath) / ".gitignore"
        if ignore.is_file():
            specs[rel_dir] = gitignore_spec(ignore.read_text(encoding="utf-8", errors="replace").splitlines())

        def ignored(rel: str, is_dir: bool) -> bool:
            for base, spec in specs.items():
                if base and not rel.startswith(base + "/"):
                    continue
                sub = rel[len(base) + 1 :] if base else rel
                if spec.match_file(sub + ("/" if is_dir else "")):
                    return True
            return False

        dirnames[:] = sorted(
            d for d in dirnames if d not in (".git", ".deepseek") and not ignored(f"{rel_dir}/{d}".lstrip("/"), True)
        )
        for name in filenames:
            rel = f"{rel_dir}/{name}".lstrip("/")
            if not ignored(rel, False):
                out.append(rel)
    return sorted(out)


async def fs_list(ctx: ToolContext, args: FsListArgs) -> dict:
    files, note = await asyncio.to_thread(workspace_listing, ctx.root)
    pattern = gitignore_spec([args.glob]) if args.glob not in ("", "**", "*") else None
    matched = [f for f in files if (pattern is None or pattern.match_file(f)) and _listable(ctx, f)]
    return {"files": matched[: args.limit], "total": len(matched), "truncated": len(matched) > args.limit,
            **({"note": note} if note else {})}


def _listable(ctx: ToolContext, rel: str) -> bool:
    """Policy check for a path produced by the walk above. The walk never follows a
    directory symlink, so only a symlink leaf needs resolving (resolving every path
    costs a syscall per component)."""
    try:
        ctx.paths.normalize(rel)
    except PolicyViolation:
        return False
    return not os.path.islink(ctx.root / rel) or ctx.paths.is_allowed(rel)


TOOLS = [
    Tool(
        "fs.read",
        "Read a workspace file (the editor's unsaved buffer if it is open). Returns content, sha256 and line range.",
        FsReadArgs,
        fs_read,
    ),
    Tool(
        "fs.list",
        "List workspace files (gitignore-aware) matching a glob.",
        FsListArgs,
        fs_list,
    ),
]
