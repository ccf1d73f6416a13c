"""`deepseek-ls serve`: run the language server (owned by the LSP issue, 7)."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "serve",
        help="run the language server (LSP over stdio by default)",
        description=(
            "Run the deepseek-ls language server. Editors start it as `deepseek-ls serve --stdio`.\n"
            "With --tcp it listens on HOST:PORT instead (for debugging)."
        ),
        handler=_serve,
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (default)")
    transport.add_argument("--tcp", action="store_true", help="listen on a TCP socket")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default: 2087)")


def _serve(args: argparse.Namespace) -> int:
    from deepseek_ls.lsp.server import run  # loaded only when serving

    run("tcp" if args.tcp else "stdio", args.host, args.port)
    return 0
