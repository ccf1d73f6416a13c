"""What a review reviews: the working tree's changes, the staged ones, a branch against its base, or a patch.

`collect(root, config, source)` returns the diff text, read-only: git runs through the
`git.diff` tool (repository programs switched off, inside the sandbox when it works,
credential files hidden, output bounded), untracked files are read through the path
policy, and a patch (`--diff FILE|-`) is taken as given. Nothing is written: no index
update, no `git add -N`. Bad input is a `ReviewInputError` (exit code 2) saying what was
wrong and what to do: not a git repository, a base that does not exist, a change larger
than `review.max_changed_lines` / `review.max_diff_bytes`, a patch that is not a diff.
"""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from deepseek_ls.agent.review_diff import ChangeSet, NotADiff, Skipped
from deepseek_ls.config_models import Config

SourceKind = Literal["worktree", "staged", "base", "diff"]


class ReviewInputError(Exception):
    """The change to review cannot be read; the message says what to do."""

    exit_code = 2

    @property
    def user_message(self) -> str:
        return str(self)


class ReviewSource(BaseModel):
    """Which change: `worktree` (staged and unstaged against HEAD, untracked files too), `staged`,
    `base` (HEAD against its merge base with `base`), or `diff` (a patch: `diff_name` is the file or "-")."""

    kind: SourceKind = "worktree"
    base: str | None = None
    paths: list[str] = Field(default_factory=list)
    diff_name: str | None = None

    def describe(self) -> str:
        where = {"worktree": "the working tree's changes against HEAD", "staged": "the staged changes",
                 "base": f"HEAD against its merge base with {self.base}",
                 "diff": f"the patch {'on stdin' if self.diff_name in (None, '-') else self.diff_name}"}[self.kind]
        return where + (f" (limited to {', '.join(self.paths)})" if self.paths else "")


class Collected(BaseModel):
    diff: str
    skipped: list[dict[str, str]] = Field(default_factory=list)  # files set aside while reading (untracked binaries)


async def collect(root: Path, config: Config, source: ReviewSource, patch: str | None = None) -> Collected:
    """The diff of `source` (`patch`: the text of a `diff` source). Raises `ReviewInputError`."""
    if source.kind == "diff":
        if patch is None:
            raise ReviewInputError("no patch was given to review")
        _check_size(patch.encode("utf-8", "surrogatepass"), config)
        return Collected(diff=patch)
    from deepseek_ls.policy.git_safety import UnsafeRepository, prepare

    try:
        safe = await asyncio.to_thread(prepare, root)
    except UnsafeRepository as exc:
        raise ReviewInputError(f"git is not run on this workspace: {exc}") from None
    if safe is None or safe.location.worktree != Path(root).resolve():
        raise ReviewInputError(f"{root} is not the top of a git repository: review a patch with --diff FILE (or - for stdin)")
    head = await asyncio.to_thread(_verify, safe, "HEAD")
    if source.kind == "base":
        if head is None:
            raise ReviewInputError("the repository has no commit yet: there is no branch to compare with a base")
        if await asyncio.to_thread(_verify, safe, source.base or "") is None:
            raise ReviewInputError(
                f"no such revision: {source.base!r} (not a branch, tag or commit here). Fetch it first; in CI, "
                "check out with the base branch's history (e.g. actions/checkout with fetch-depth: 0)")
    if source.kind == "worktree" and head is None:
        raise ReviewInputError("the repository has no commit yet: review what is staged with --staged, "
                               "or a patch with --diff FILE")
    host = _tools(root, config)
    args: dict[str, object] = {"paths": source.paths, "context_lines": config.review.context_lines}
    if source.kind == "staged":
        args["staged"] = True
    elif source.kind == "base":
        args["rev"] = f"{source.base}...HEAD"
    else:
        args["rev"] = "HEAD"
    outcome = await host.call("git.diff", args)
    if not outcome.ok:
        raise ReviewInputError(f"could not read {source.describe()}: {outcome.error}")
    value = outcome.value or {}
    if value.get("truncated"):
        raise _too_large(f"the diff is larger than review.max_diff_bytes ({config.review.max_diff_bytes} bytes)")
    diff, skipped = value.get("diff", ""), []
    if source.kind == "worktree":
        extra, skipped = await _untracked(host, root, config, source.paths)
        diff += extra
    _check_size(diff.encode("utf-8", "surrogatepass"), config)
    return Collected(diff=diff, skipped=skipped)


def changes_of(text: str, root: Path, config: Config, skipped: list[dict[str, str]] | None = None) -> ChangeSet:
    """`text` read as a `ChangeSet`, with the files the model must not see set aside; the change's
    size checked against `review.max_changed_lines`. Raises `ReviewInputError`."""
    from deepseek_ls.policy.paths import secret_location

    deny = config.policy.deny_paths
    try:
        changes = ChangeSet.from_diff(text, allowed=lambda path: secret_location(path, deny))
    except NotADiff as exc:
        raise ReviewInputError(f"{exc}; give a unified diff (`git diff` output or a .patch file)") from None
    changes.skipped[:0] = [Skipped(s["file"], s["reason"]) for s in skipped or []]
    limit = config.review.max_changed_lines
    if changes.changed_lines > limit:
        raise _too_large(f"the change has {changes.changed_lines:,} changed lines, more than review.max_changed_lines "
                         f"({limit:,})")
    return changes


def _too_large(what: str) -> ReviewInputError:
    return ReviewInputError(f"{what}: review it in parts (name paths, or a nearer --base), or raise the limit")


def _check_size(data: bytes, config: Config) -> None:
    if len(data) > config.review.max_diff_bytes:
        raise _too_large(f"the diff has {len(data):,} bytes, more than review.max_diff_bytes "
                         f"({config.review.max_diff_bytes:,})")


def _verify(safe, rev: str) -> str | None:
    """The commit `rev` names, or None (a revision that does not exist, or an unborn HEAD)."""
    if not rev or rev.startswith("-"):
        return None
    proc = safe.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _tools(root: Path, config: Config):
    """A read-only tool host whose git output may be as large as a diff under review may be."""
    from deepseek_ls.tools.host import ToolHost

    cfg = config.model_copy(deep=True)
    cfg.policy.max_output_bytes = config.review.max_diff_bytes
    return ToolHost(root, cfg, read_only=True)


async def _untracked(host, root: Path, config: Config, paths: list[str]) -> tuple[str, list[dict[str, str]]]:
    """New files git does not track yet, as added-file diffs (read through the path policy)."""
    status = await host.call("git.status", {})
    if not status.ok:
        raise ReviewInputError(f"could not list untracked files: {status.error}")
    names = [e["path"] for e in (status.value or {}).get("entries", []) if e.get("index") == "?"]
    wanted = [n for n in names if not paths or any(n == p.rstrip("/") or n.startswith(p.rstrip("/") + "/") for p in paths)]
    return await asyncio.to_thread(_added_diffs, root, config, wanted)


def _added_diffs(root: Path, config: Config, names: list[str]) -> tuple[str, list[dict[str, str]]]:
    from deepseek_ls.policy import PolicyViolation
    from deepseek_ls.policy.paths import secret_location
    from deepseek_ls.policy.safe_files import read_bytes

    out: list[str] = []
    skipped: list[dict[str, str]] = []
    limit = config.review.max_diff_bytes
    for name in names:
        refused = secret_location(name, config.policy.deny_paths)
        if refused:
            skipped.append({"file": name, "reason": f"not sent to the model: {refused}"})
            continue
        try:
            data = read_bytes(root, name, max_bytes=limit)
        except (PolicyViolation, OSError) as exc:
            skipped.append({"file": name, "reason": f"not read: {exc}"})
            continue
        if len(data) > limit:
            raise _too_large(f"the untracked file {name} is larger than review.max_diff_bytes ({limit:,} bytes)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None or "\0" in text:
            skipped.append({"file": name, "reason": "binary file: not reviewed"})
            continue
        lines = text.splitlines(keepends=True)
        if not lines:
            skipped.append({"file": name, "reason": "no text change (a mode change or an empty file)"})
            continue
        if not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n\\ No newline at end of file\n"
        out.append(f"diff --git a/{name} b/{name}\nnew file mode 100644\n")
        out.extend(difflib.unified_diff([], lines, "/dev/null", f"b/{name}", n=0))
    return "".join(out), skipped
