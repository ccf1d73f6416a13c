"""`deepseek-ls review`: review a change and report findings — the analysis-only path from the shell and CI.

What is reviewed: the working tree's changes against HEAD (default; untracked files too),
`--staged`, `--base REF` (HEAD against its merge base with REF: a branch as its pull request
shows it) or `--diff FILE|-` (a patch), limited to the named paths if any. Nothing is
staged, run or written (agent/review.py). Output: text grouped by file (stdout), `--json`,
or `--sarif` (SARIF 2.1.0). Findings the person dismissed in the editor are left out.

Exit codes: 0 reviewed, no finding at or above `--fail-on` (also: nothing to review);
1 findings at or above `--fail-on`; 2 bad input (a base that does not exist, a patch that is
not a diff, a change over the size limits, not a git repository); 3-10 LLM errors (docs/llm.md);
11 the review is incomplete: for some part of the change the model's answers were never
findings (the findings of the other parts are still printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deepseek_ls.cli.common import add_command, exit_with, print_json, resolve_context

EXIT_FINDINGS = 1
EXIT_INCOMPLETE = 11
SEVERITY_RANK = {"note": 0, "warning": 1, "error": 2}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers, "review",
        help="review a change and report findings (read-only: nothing is staged, run or written)",
        description=__doc__.split("\n\n", 1)[1],
        handler=run,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="review only the changes to these paths")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--staged", action="store_true", help="review what is staged (the index against HEAD)")
    source.add_argument("--base", metavar="REF", help="review HEAD against its merge base with REF (a branch's change)")
    source.add_argument("--diff", metavar="FILE", help="review a unified diff from FILE ('-': stdin)")
    parser.add_argument("--sarif", action="store_true", help="print SARIF 2.1.0 on stdout (for code-scanning UIs)")
    parser.add_argument("--fail-on", choices=["error", "warning", "note"], default="error",
                        help="exit 1 when a finding is at least this severe (default: error)")
    parser.add_argument("--focus", metavar="TEXT", help="what the reviewer should look at especially")
    parser.add_argument("--think", dest="force", action="store_const", const="max_think",
                        help="review on the max-think profile")
    parser.add_argument("--fast", dest="force", action="store_const", const="fast", help="review on the fast profile")
    parser.add_argument("--stream", action="store_true", help="show the model's output on stderr as it arrives")


def run(args: argparse.Namespace) -> int:
    from deepseek_ls.agent.review_input import ReviewSource

    if args.sarif and args.json:
        exit_with("--json and --sarif are exclusive: choose one output", code=2)
    ctx = resolve_context(args)
    kind = "staged" if args.staged else "base" if args.base else "diff" if args.diff else "worktree"
    source = ReviewSource(kind=kind, base=args.base, paths=list(args.paths), diff_name=args.diff)
    patch = _read_patch(args.diff) if args.diff else None
    result = _review(ctx, args, source, patch)
    review = result.to_json()
    if args.sarif:
        from deepseek_ls.cli.review_sarif import to_sarif

        print_json(to_sarif(review))
    elif args.json:
        print_json(review)
    else:
        print_text(review)
    return exit_code(review, args.fail_on)


def exit_code(review: dict[str, Any], fail_on: str) -> int:
    if not review["complete"]:
        for failed in review["failed"]:
            print(f"deepseek-ls: review incomplete: {', '.join(failed['files'])}: {failed['error']}", file=sys.stderr)
        return EXIT_INCOMPLETE
    worst = max((SEVERITY_RANK[f["severity"]] for f in review["findings"]), default=-1)
    return EXIT_FINDINGS if worst >= SEVERITY_RANK[fail_on] else 0


def _read_patch(name: str) -> str:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        exit_with(f"--diff {name}: {exc.strerror or exc}", code=2)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        exit_with(f"--diff {name}: not UTF-8 text (a binary file?); give a unified diff", code=2)


def _review(ctx: Any, args: argparse.Namespace, source: Any, patch: str | None) -> Any:
    from deepseek_ls.agent.review_dismiss import DismissedFindings
    from deepseek_ls.agent.review_input import ReviewInputError
    from deepseek_ls.cli.agent_cmd import _agent, _drive, _Driven
    from deepseek_ls.cli.terminal_ui import TerminalUI

    dismissed = DismissedFindings(ctx.state_dir, ctx.root).fingerprints()
    driven = _Driven()

    async def go():
        agent = driven.agent = _agent(ctx, args, TerminalUI(show_stream=args.stream), read_only=True)
        try:
            return await agent.review(source, patch=patch, focus=args.focus, dismissed=dismissed, profile=args.force,
                                      on_session=lambda sid: setattr(driven, "session_id", sid))
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    try:
        result = _drive(go, driven)
    except ReviewInputError as exc:
        exit_with(exc)
    if result is None:
        raise SystemExit(1)
    if result.note:
        print(f"deepseek-ls: {result.note}", file=sys.stderr)
    return result


def print_text(review: dict[str, Any]) -> None:
    from deepseek_ls.agent.review_report import text_report

    print(text_report(review), end="")
