"""`deepseek-ls ask`: one question to the model (owned by the LLM issue, 3)."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "ask",
        help="ask the model a question about the workspace (streams the answer)",
        description="Ask DeepSeek a question; the answer is streamed to stdout ('-' reads the prompt from stdin).",
        handler=not_available("ask", 3),
    )
    parser.add_argument("prompt", nargs="+", help="the question ('-' reads it from stdin)")
