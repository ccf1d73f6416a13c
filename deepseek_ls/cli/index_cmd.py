"""`deepseek-ls index build|update|status|query`: the code index (issue 5)."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from deepseek_ls.cli.common import CliContext, add_command, print_json, resolve_context


def register(subparsers: argparse._SubParsersAction) -> None:
    index = add_command(
        subparsers,
        "index",
        help="build, update, inspect and query the code index",
        description="The workspace's tantivy code index, kept under .deepseek/index/.",
    )
    actions = index.add_subparsers(dest="index_command", metavar="ACTION", title="actions")
    add_command(actions, "build", help="build the index from scratch (progress on stderr)", handler=_build)
    update = add_command(
        actions, "update", help="re-index changed files (or the given paths)", handler=_update
    )
    update.add_argument("paths", nargs="*", help="files to re-index (default: every changed file)")
    add_command(
        actions,
        "status",
        help="say whether the index is fresh, stale (and what changed), corrupt or missing; exit 0 only when fresh",
        handler=_status,
    )
    query = add_command(
        actions,
        "query",
        help="search the index (one query, or one a line with --queries-from)",
        description=(
            "Search the index. Several queries in one invocation (--queries-from FILE, or - for\n"
            "stdin, one query a line) share one start-up and one open index: ten queries cost\n"
            "about what one does (bench/bench_index.py)."
        ),
        handler=_query,
    )
    query.add_argument(
        "query", nargs="?", help="the search query (identifiers, words; query syntax is optional)"
    )
    query.add_argument(
        "--queries-from", metavar="FILE",
        help="read queries from FILE (- for stdin), one a line; results are printed in that order",
    )
    query.add_argument("--top-k", type=int, default=10, help="number of files to return (default 10)")
    query.add_argument(
        "--path-glob", "--glob", dest="path_glob", help="only paths matching this gitignore-style glob"
    )
    query.add_argument("--lang", help="only files of this language (py, rust, typescript, ...)")
    query.add_argument("--update", action="store_true", help="bring a stale index up to date first")


def _open(args: argparse.Namespace):
    from deepseek_ls.index import CodeIndex

    ctx: CliContext = resolve_context(args)
    return CodeIndex.for_workspace(ctx.root, ctx.state_dir, ctx.config)


class _TerminalProgress:
    """`files/s` on one rewritten stderr line, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, p) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.1 and p.done != p.total):
            return
        self._last = now
        path = p.path if len(p.path) <= 50 else "…" + p.path[-49:]
        sys.stderr.write(f"\r\x1b[Kindexing {p.done}/{p.total} files  {p.files_per_second:,.0f} files/s  {path}")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _build_with_progress(index):
    progress = _TerminalProgress()
    try:
        return index.build(progress=progress)
    finally:
        progress.done()


def _print_report(report, json_out: bool) -> None:
    if json_out:
        print_json(report)
        return
    verb = "indexed" if report.kind == "build" else "re-indexed"
    print(
        f"{verb} {report.files_indexed} files ({report.bytes_indexed / 1e6:.1f} MB) in "
        f"{report.seconds:.2f}s, {report.mb_per_second:.1f} MB/s; {report.total_files} files in the index"
    )
    if report.removed:
        print(f"removed {len(report.removed)}: " + ", ".join(report.removed[:10]))
    if report.restarted:
        print("re-read (changed during the build): " + ", ".join(report.restarted))
    if report.skipped:
        reasons = Counter(s.reason for s in report.skipped)
        summary = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(reasons.items()))
        print(f"skipped {len(report.skipped)} ({summary}):", file=sys.stderr)
        for item in report.skipped[:20]:
            print(f"  {item.reason:10} {item.path}", file=sys.stderr)
        if len(report.skipped) > 20:
            print(f"  … {len(report.skipped) - 20} more (see --json)", file=sys.stderr)


def _build(args: argparse.Namespace) -> int:
    _print_report(_build_with_progress(_open(args)), args.json)
    return 0


def _update(args: argparse.Namespace) -> int:
    index = _open(args)
    _print_report(index.update(args.paths or None), args.json)
    index.wait_idle()  # close the writer kept for further saves now, not after its linger
    return 0


def _status(args: argparse.Namespace) -> int:
    status = _open(args).status()
    if args.json:
        print_json(status)
    else:
        line = status.state
        if status.state in ("fresh", "stale"):
            line += f" ({status.files} files, built {status.built_at}"
            line += f", baseline {status.baseline_commit[:12]})" if status.baseline_commit else ")"
        else:
            line += f": {status.reason}"
        print(line)
        for change in status.changed:
            print(f"  {change.change:9} {change.path}")
        if status.state in NEXT_STEP:
            print(NEXT_STEP[status.state], file=sys.stderr)
    return 0 if status.state == "fresh" else 1


# What to run for each state that is not fresh (`index status` says it).
NEXT_STEP = {
    "missing": "to build it, run: deepseek-ls index build",
    "stale": "to bring it up to date, run: deepseek-ls index update",
    "corrupt": "to rebuild it, run: deepseek-ls index build",
}


def _queries(args: argparse.Namespace) -> list[str]:
    queries = [args.query] if args.query else []
    if args.queries_from:
        stream = sys.stdin if args.queries_from == "-" else open(args.queries_from, encoding="utf-8")
        with stream:
            queries += [line.strip() for line in stream if line.strip()]
    if not queries:
        raise ValueError("give a query, or --queries-from FILE (- for stdin) with one query a line")
    return queries


def _query(args: argparse.Namespace) -> int:
    from deepseek_ls.index import IndexUnavailable

    queries = _queries(args)
    index = _open(args)

    def ask(text: str):
        return index.query(text, top_k=args.top_k, path_glob=args.path_glob, lang=args.lang)

    try:
        if args.update:
            index.update()
            index.wait_idle()  # close the writer kept for further saves now, not after its linger
        first = ask(queries[0])
    except IndexUnavailable as exc:
        print(f"deepseek-ls: the index is {exc.status.state} ({exc.status.reason}); building it", file=sys.stderr)
        _build_with_progress(index)
        first = ask(queries[0])
    results = [first, *(ask(text) for text in queries[1:])]
    if args.json:
        print_json(results[0] if args.query and not args.queries_from else results)
        return 0
    if not results[0].fresh:
        print("note: the index is stale; `deepseek-ls index update` (or --update) refreshes it", file=sys.stderr)
    for result in results:
        if len(results) > 1:
            print(f"# {result.query}")
        for warning in result.warnings:
            print(f"note: {warning}", file=sys.stderr)
        if not result.hits:
            print("no matches", file=sys.stderr if len(results) == 1 else sys.stdout)
        for hit in result.hits:
            print(f"{hit.path}  ({hit.score:.2f})")
            for line in hit.lines:
                print(f"  {line.line:>5}: {line.text}")
    return 0
