"""`fs.search_rg`: ripgrep over the workspace, with open buffers searched in memory.

The `rg` binary comes from the `ripgrep` package installed with ours (found from its
file list, wherever the venv is and whether or not its `bin` is on PATH; else beside
`sys.executable`, else on PATH); the sandbox shows it (`policy/sandbox_install.py`). It runs without a shell and with
`--no-config`, the query passed after `-e` so it can never be read as a flag,
and the deny-list turned into exclude globs (results are filtered by the path
policy as well), inside the OS sandbox when there is one (secret files masked).
Reading stops once `limit` matches are in; rg is then killed, its pipes
drained and it is reaped, every wait bounded (`tools/proc.py`).

Under an editor that may refuse reads (ACP's client: `DocumentOverlay.asks_reads`), each file rg
matched is asked of the editor before its lines are shown; matches in a file it did not let us read
are withheld and the result says how many, where and why (`overlay.withheld_reads`).

"No matches" is said only when rg ran and said so: an rg that could not run (missing, not
executable, hidden by the sandbox — bwrap's failure also exits 1), was killed or took too long is
an error, "search failed: ..." (`policy/launch.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field

from deepseek_ls.globs import gitignore_spec
from deepseek_ls.patch.overlay import withheld_note, withheld_reads
from deepseek_ls.policy.command_secrets import rg_exclude_args
from deepseek_ls.policy.env import host_exec_path, scrubbed_env
from deepseek_ls.policy.launch import ProgramNotRun, killed_by
from deepseek_ls.policy.redact import cut_chars
from deepseek_ls.policy.sandbox_install import bundled_rg
from deepseek_ls.policy.secret_files import file_is_secret, secret_kind
from deepseek_ls.tools import proc
from deepseek_ls.tools.registry import Tool, ToolContext

MAX_LINE = 400
SEARCH_TIMEOUT_SECONDS = 30.0


class SearchArgs(BaseModel):
    query: str = Field(min_length=1, description="regular expression (or literal text with fixed_strings)")
    globs: list[str] = Field(default_factory=list, description="limit to paths matching these globs, e.g. ['*.py', '!tests/**']")
    limit: int = Field(default=100, gt=0, le=2000, description="maximum number of matching lines")
    fixed_strings: bool = False
    case_insensitive: bool = False


def rg_binary(workspace: Path | None = None) -> str:
    """ripgrep as the `ripgrep` package installed it with ours (as trusted as our own code), else
    beside the interpreter running us, else on `PATH` outside any workspace (a repository's own
    `rg` is never ours). Raises `ProgramNotRun` when there is none."""
    bundled = bundled_rg()
    if bundled is not None:
        return str(bundled)
    beside = Path(sys.executable).parent / "rg"
    if os.path.lexists(beside):
        return str(beside)  # whether it can run is checked when it is started
    found = shutil.which("rg", path=host_exec_path(workspace=workspace))
    if found is None:
        raise ProgramNotRun("rg", f"ripgrep is not installed (not beside {sys.executable}, not on PATH)",
                            "install the 'ripgrep' Python package into deepseek-ls's environment")
    return found


async def search_rg(ctx: ToolContext, args: SearchArgs) -> dict:
    try:
        return await _search(ctx, args)
    except ProgramNotRun as exc:
        raise exc.during("search") from None


async def _search(ctx: ToolContext, args: SearchArgs) -> dict:
    # --sort path: a deterministic order (replay, and a stable first `limit` matches).
    argv = [rg_binary(ctx.root), "--json", "--no-config", "--sort", "path", "--max-columns", str(MAX_LINE), "--max-columns-preview"]
    if args.fixed_strings:
        argv.append("--fixed-strings")
    if args.case_insensitive:
        argv.append("--ignore-case")
    for glob in args.globs:
        argv += ["--glob", glob]
    argv += rg_exclude_args(ctx.paths.deny_patterns)  # after the model's globs: the last match wins
    argv += ["-e", args.query, "--", "."]
    sandboxed = ctx.sandbox is not None and (await ctx.sandbox.astatus()).available
    open_docs = set(ctx.overlay.open_paths())
    try:
        matches = await _run_rg(ctx, ctx.sandbox.wrap(argv) if sandboxed else argv, sandboxed, args.limit, open_docs)
    except ProgramNotRun as error:
        if not (sandboxed and error.raced):
            raise
        # A path the sandbox was to cover vanished while it started (nothing ran): once more, afresh.
        matches = await _run_rg(ctx, ctx.sandbox.wrap(argv), sandboxed, args.limit, open_docs)
    matches, withheld = await _withhold_unread(ctx, matches)
    matches += _search_buffers(ctx, args, open_docs)
    matches.sort(key=lambda m: (m["path"], m["line"]))
    return {"matches": matches[: args.limit], "truncated": len(matches) > args.limit, **withheld}


async def _run_rg(ctx: ToolContext, argv: list[str], sandboxed: bool, limit: int, open_docs: set[str]) -> list[dict]:
    """rg's matches (up to `limit` + 1); raises when rg could not run, failed or took too long."""
    process = await proc.spawn(argv, cwd=ctx.root, env=scrubbed_env(), sandboxed=sandboxed)
    # stderr is drained all along: a full stderr pipe would stall rg (and this search) otherwise.
    err = proc.Capped(16_000)
    err_task = asyncio.ensure_future(proc.drain(process.stderr, err))
    stopped_early = True
    try:
        matches, stopped_early = await asyncio.wait_for(
            _read_matches(ctx, process, open_docs, limit + 1), timeout=SEARCH_TIMEOUT_SECONDS
        )
    except asyncio.TimeoutError:
        raise TimeoutError(f"search failed: rg took more than {SEARCH_TIMEOUT_SECONDS:g} s and was stopped; "
                           "narrow it with globs") from None
    finally:
        # Kill rg if it is still going, drain both pipes, reap it: each step bounded.
        out_task = asyncio.ensure_future(proc.drain(process.stdout, None))
        await proc.stop(process, kill=stopped_early, drains=[out_task, err_task])
    if not stopped_early:
        _check_exit(argv, process.returncode, err.value(), sandboxed)
    return matches


async def _withhold_unread(ctx: ToolContext, matches: list[dict]) -> tuple[list[dict], dict]:
    """rg read the disk: matches in files the editor did not let us read are taken out, and what was
    taken out is said (`overlay.withheld_note`)."""
    if not ctx.overlay.asks_reads or not matches:
        return matches, {}
    reasons = await asyncio.to_thread(withheld_reads, ctx.overlay, [m["path"] for m in matches])
    if not reasons:
        return matches, {}
    counts = Counter(m["path"] for m in matches if m["path"] in reasons)
    return [m for m in matches if m["path"] not in reasons], withheld_note(counts, reasons)


def _check_exit(argv: list[str], code: int | None, stderr: bytes, sandboxed: bool) -> None:
    """rg's exit status is its answer only when rg ran: 0 (matches), 1 (none), 2 (an error it
    names, e.g. a bad regex)."""
    proc.check_ran(argv, code, b"", stderr, sandboxed=sandboxed)
    if code in (0, 1):
        return
    signal = killed_by(code, sandboxed=sandboxed)
    if signal is not None:
        raise ProgramNotRun("rg", f"it was killed by {signal}", "try again; if it recurs, narrow the search "
                            "with globs (a memory limit may have stopped it)")
    said = stderr.decode(errors="replace").strip()
    raise ValueError(f"rg failed: {said or f'exit status {code}'}")


async def _read_matches(
    ctx: ToolContext, proc: asyncio.subprocess.Process, open_docs: set[str], enough: int
) -> tuple[list[dict], bool]:
    """Matches from rg's JSON stream, and whether it stopped once `enough` were in (before rg finished)."""
    assert proc.stdout is not None
    allowed: dict[str, bool] = {}
    matches: list[dict] = []
    while len(matches) < enough:
        line = await proc.stdout.readline()
        if not line:
            return matches, False
        event = json.loads(line)
        if event.get("type") != "match":
            continue
        data = event["data"]
        path = data["path"].get("text", "")
        path = path[2:] if path.startswith("./") else path
        if path not in allowed:
            allowed[path] = path not in open_docs and ctx.paths.is_allowed(path) and not file_is_secret(ctx.root, path)
        if not allowed[path]:
            continue
        text = data["lines"].get("text", "").rstrip("\r\n")
        matches.append({"path": path, "line": data["line_number"], "text": _line(text)})
    return matches, True


def _line(text: str) -> str:
    """A matched line, at most MAX_LINE characters, without a word the cut splits (redaction would
    not recognise a secret cut in two)."""
    return cut_chars(text, MAX_LINE)


def _search_buffers(ctx: ToolContext, args: SearchArgs, open_docs: set[str]) -> list[dict]:
    flags = re.IGNORECASE if args.case_insensitive else 0
    try:
        rx = re.compile(re.escape(args.query) if args.fixed_strings else args.query, flags)
    except re.error:
        rx = re.compile(re.escape(args.query), flags)
    include = None
    if args.globs:
        include = gitignore_spec(args.globs)
    out = []
    for path in sorted(open_docs):
        if not ctx.paths.is_allowed(path) or (include is not None and not include.match_file(path)):
            continue
        doc = ctx.overlay.get(path)
        if doc is None or secret_kind(doc[0]) is not None:
            continue
        for n, text in enumerate(doc[0].splitlines(), 1):
            if rx.search(text):
                out.append({"path": path, "line": n, "text": _line(text)})
    return out


TOOLS = [
    Tool(
        "fs.search_rg",
        "Search workspace files with ripgrep (regex or fixed string), gitignore-aware. Returns path, line, text.",
        SearchArgs,
        search_rg,
    )
]
