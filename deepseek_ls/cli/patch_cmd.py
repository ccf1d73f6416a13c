"""`deepseek-ls diff|apply`: staged patches (owned by the tools/patch issue, 4)."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    diff = add_command(
        subparsers,
        "diff",
        help="show staged patches (all pending, or one)",
        description="Print the staged patch PATCH_ID as a unified diff, or list pending patches.",
        handler=not_available("diff", 4),
    )
    diff.add_argument("patch_id", nargs="?", help="the patch to show (default: list pending patches)")

    apply = add_command(
        subparsers,
        "apply",
        help="apply a staged patch to disk (whole, per file or per hunk)",
        description="Apply staged patch PATCH_ID to the files on disk (a checkpoint is taken first).",
        handler=not_available("apply", 4),
    )
    apply.add_argument("patch_id", help="the patch to apply")
    apply.add_argument("--hunk", action="append", metavar="HUNK_ID", help="apply only this hunk (repeatable)")
    apply.add_argument("--file", action="append", metavar="PATH", help="apply only this file's hunks (repeatable)")
