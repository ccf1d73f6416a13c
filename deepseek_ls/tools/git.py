"""Git tools (read-only, via GitPython): `git.status`, `git.diff`, `git.show`, `repo.info`.

External diff drivers and textconv filters are disabled so a repository's
configuration cannot make a read run a program.
"""

from __future__ import annotations

import asyncio
import platform
import re
import sys

import git
from pydantic import BaseModel, Field

from deepseek_ls.policy.command_secrets import git_exclude_pathspecs
from deepseek_ls.policy.secret_files import check_not_secret, file_is_secret
from deepseek_ls.tools.registry import Tool, ToolContext

_REV = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./~^@{}+-]*$")


class NoArgs(BaseModel):
    pass


class DiffArgs(BaseModel):
    staged: bool = Field(default=False, description="diff the index against HEAD instead of the work tree")
    rev: str | None = Field(default=None, description="compare against this revision, e.g. HEAD~1 or main")
    paths: list[str] = Field(default_factory=list, description="limit to these workspace-relative paths")


class ShowArgs(BaseModel):
    rev: str = Field(default="HEAD", description="a commit, branch or tag")
    path: str = Field(description="workspace-relative path of the file to show at that revision")


def _repo(ctx: ToolContext) -> git.Repo:
    try:
        return git.Repo(ctx.root, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ValueError("the workspace is not a git repository") from None


def _check_rev(rev: str) -> str:
    if not _REV.match(rev) or ".." in rev.split("/"):
        raise ValueError(f"{rev!r} is not an acceptable revision (letters, digits and _./~^@{{}}+- only, not starting with '-')")
    return rev


def _cap(ctx: ToolContext, text: str) -> tuple[str, bool]:
    cap = ctx.config.policy.max_output_bytes
    raw = text.encode("utf-8", "replace")
    if len(raw) <= cap:
        return text, False
    return raw[:cap].decode("utf-8", "ignore"), True


async def git_status(ctx: ToolContext, args: NoArgs) -> dict:
    def run() -> dict:
        repo = _repo(ctx)
        out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all")
        entries = []
        items = [x for x in out.split("\0") if x]
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
        try:
            branch = repo.active_branch.name
        except TypeError:
            branch = None
        return {"branch": branch, "entries": entries, "clean": not entries}

    return await asyncio.to_thread(run)


async def git_diff(ctx: ToolContext, args: DiffArgs) -> dict:
    paths = [ctx.paths.relative(p) for p in args.paths]

    def run() -> dict:
        repo = _repo(ctx)
        argv = ["--no-ext-diff", "--no-textconv", "--no-color"]
        if args.staged:
            argv.append("--cached")
        if args.rev:
            argv.append(_check_rev(args.rev))
        # Secret locations never appear, whatever the paths asked for: exclude pathspecs for
        # the deny-list, and for changed files whose content is a credential file.
        excludes = git_exclude_pathspecs(ctx.paths.deny_patterns)
        pathspecs = ["--", *(paths or [":/"]), *excludes]
        names = repo.git.diff(*argv, "--name-only", "-z", *pathspecs).split("\0")
        hidden = [n for n in names if n and file_is_secret(ctx.root, n)]
        pathspecs += [f":(exclude,literal){n}" for n in hidden]
        text, truncated = _cap(ctx, repo.git.diff(*argv, *pathspecs))
        return {"diff": text, "truncated": truncated, **({"hidden_secret_files": hidden} if hidden else {})}

    return await asyncio.to_thread(run)


async def git_show(ctx: ToolContext, args: ShowArgs) -> dict:
    rev = _check_rev(args.rev)
    path = ctx.paths.relative(args.path)

    def run() -> dict:
        repo = _repo(ctx)
        try:
            blob = repo.commit(rev).tree / path
        except (git.BadName, ValueError, KeyError):
            raise ValueError(f"{path} does not exist at {rev}") from None
        data = blob.data_stream.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{path} at {rev} is not UTF-8 text") from None
        check_not_secret(f"{rev}:{path}", text)
        content, truncated = _cap(ctx, text)
        return {"rev": rev, "path": path, "content": content, "truncated": truncated}

    return await asyncio.to_thread(run)


async def repo_info(ctx: ToolContext, args: NoArgs) -> dict:
    def run() -> dict:
        info: dict = {
            "root": str(ctx.root),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "git": False,
        }
        try:
            repo = git.Repo(ctx.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return info
        info["git"] = True
        try:
            info["head"] = repo.head.commit.hexsha
            info["branch"] = None if repo.head.is_detached else repo.active_branch.name
        except ValueError:  # no commits yet
            info["head"] = None
            info["branch"] = None
        info["dirty"] = repo.is_dirty(untracked_files=True)
        return info

    return await asyncio.to_thread(run)


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
