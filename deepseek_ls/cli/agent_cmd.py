"""`deepseek-ls plan|chat|run|autopilot`: the agent loop (owned by the agent issue, 6)."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = add_command(
        subparsers,
        "plan",
        help="make a plan for a change (read-only; prints the plan)",
        description="Start a session in plan mode: the planner reads the workspace and prints a Plan.",
        handler=not_available("plan", 6),
    )
    plan.add_argument("prompt", nargs="+", help="what you want changed")

    chat = add_command(
        subparsers,
        "chat",
        help="interactive session in the terminal",
        description="An interactive agent session: type requests, approve patches and commands.",
        handler=not_available("chat", 6),
    )
    chat.add_argument("--session", metavar="ID", help="continue this session")

    run = add_command(
        subparsers,
        "run",
        help="run (or resume) a session's plan step by step",
        description="Run a new request end to end, or resume SESSION_ID where it stopped.",
        handler=not_available("run", 6),
    )
    run.add_argument("target", nargs="+", help="a session id to resume, or a new request")

    autopilot = add_command(
        subparsers,
        "autopilot",
        help="plan, execute and verify without stopping for approvals (trusted repos)",
        description="Run the whole agent loop in yolo mode: approvals are automatic; policy still applies.",
        handler=not_available("autopilot", 6),
    )
    autopilot.add_argument("prompt", nargs="+", help="what you want changed")
