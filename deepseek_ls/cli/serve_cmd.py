"""`deepseek-ls serve`: run the language server; its exit code is the server's
(0 after an orderly `shutdown` + `exit`, else 1)."""

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
    parser.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="refuse (and skip) LSP messages larger than N bytes (default: 64 MiB, or $DEEPSEEK_LS_MAX_MESSAGE_BYTES)",
    )


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of bytes")
    return int(text)


def _serve(args: argparse.Namespace) -> int:
    import gc

    # Building the server allocates lsprotocol's ~1,000 classes, pygls' converter and our
    # features, all kept for the life of the process: a collection on the way only walks them
    # (~50 ms of CPU before the `initialize` answer). `run` freezes them and turns it back on.
    gc.disable()
    from deepseek_ls.lsp.setup import run  # loaded only when serving

    return run("tcp" if args.tcp else "stdio", args.host, args.port, args.max_message_bytes)
