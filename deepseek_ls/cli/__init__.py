"""`deepseek-ls`: the command-line adapter over the same core the language server uses.

Each command group lives in its own module exposing ``register(subparsers)``;
a registered parser sets ``func`` to a handler ``(args) -> int`` (exit code).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from deepseek_ls import __version__
from deepseek_ls.cli import (
    agent_cmd,
    ask_cmd,
    config_cmd,
    index_cmd,
    patch_cmd,
    serve_cmd,
    sessions_cmd,
)
from deepseek_ls.cli.common import add_global_options, exit_with

# Order is the order of `--help`.
COMMAND_MODULES = (serve_cmd, ask_cmd, agent_cmd, patch_cmd, index_cmd, sessions_cmd, config_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepseek-ls",
        description=(
            "A DeepSeek-powered coding agent whose user interface is your editor. "
            "`serve` runs the language server; the other commands drive the same core "
            "from the shell."
        ),
    )
    parser.add_argument("--version", action="version", version=f"deepseek-ls {__version__}")
    add_global_options(parser, suppress_defaults=False)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def _configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    # stderr only: stdout is the LSP wire for `serve` and the data channel for `--json`.
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    handler = getattr(args, "func", None)
    if handler is None:
        # A group without its subcommand (e.g. `deepseek-ls index`) prints its own help.
        (getattr(args, "group_parser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("deepseek-ls: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `deepseek-ls ... | head`: the reader left; not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except SystemExit:
        raise
    except Exception as error:  # noqa: BLE001 - the CLI's last line of defence
        if args.verbose:
            logging.getLogger("deepseek_ls.cli").exception("command failed")
        exit_with(error)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
