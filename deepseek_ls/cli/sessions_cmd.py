"""`deepseek-ls sessions` and `deepseek-ls replay ID --json`: the event store's views."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    add_command(
        subparsers,
        "sessions",
        help="list this workspace's sessions",
        description="List the sessions recorded under .deepseek/sessions/ (newest first).",
        handler=not_available("sessions", 2),
    )
    replay = add_command(
        subparsers,
        "replay",
        help="show a session rebuilt from its event log",
        description="Rebuild one session's projections (transcript, plan, patches, tools, router) from its log.",
        handler=not_available("replay", 2),
    )
    replay.add_argument("session_id", help="the session to replay")
