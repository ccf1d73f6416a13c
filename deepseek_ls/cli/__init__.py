"""`deepseek-ls`: the command-line adapter over the same core the language server uses.

Each command group lives in its own module exposing ``register(subparsers)``;
a registered parser sets ``func`` to a handler ``(args) -> int`` (exit code).
A new command must also be listed in `COMMANDS` (tests/unit/cli checks it), and
command modules import heavy parts of the core inside their handlers.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False  # (typing is not imported at start-up: `config show` runs from a cache)

from deepseek_ls import __version__

if TYPE_CHECKING:
    import argparse

# argparse, logging and cli.common are imported where used: `config show` served
# from its cache (show_cache.py) never needs them.

# Which module registers each command, in `--help` order. A command's module is
# imported only when that command runs (the others pull in the LLM client, the
# agent, the index...), so `deepseek-ls config show` does not pay for them all.
COMMANDS: dict[str, str] = {
    "serve": "serve_cmd",
    "ask": "ask_cmd",
    "review": "review_cmd",
    "plan": "agent_cmd",
    "chat": "chat",
    "run": "agent_cmd",
    "autopilot": "agent_cmd",
    "diff": "patch_cmd",
    "apply": "patch_cmd",
    "index": "index_cmd",
    "sessions": "sessions_cmd",
    "replay": "sessions_cmd",
    "config": "config_cmd",
    "mcp": "mcp_cmd",
    "models": "models_cmd",
    "trust": "trust_cmd",
    "acp": "acp_cmd",
}
# `deepseek-ls --help` lists the commands from this table without importing any of
# their modules (tests/unit/cli checks it says what each module registers).
SUMMARIES: dict[str, str] = {
    "serve": "run the language server (LSP over stdio by default)",
    "ask": "ask the model a question about the workspace (streams the answer)",
    "review": "review a change and report findings (read-only: nothing is staged, run or written)",
    "plan": "make a plan for a change (read-only; prints the plan)",
    "chat": "interactive session in the terminal",
    "run": "run (or resume) a session's plan step by step",
    "autopilot": "plan, execute and verify without stopping for approvals (trusted repos)",
    "diff": "show staged patches (all pending, or one)",
    "apply": "apply a unified diff or a staged patch to disk (whole, per file or per hunk)",
    "index": "build, update, inspect and query the code index",
    "sessions": "list this workspace's sessions",
    "replay": "show a session rebuilt from its event log",
    "config": "show, edit or locate the configuration",
    "mcp": "list, test and approve MCP servers (tools named mcp_<server>_<tool>)",
    "models": "list the model registry: capabilities, prices, which profile uses each, where each value came from",
    "trust": "trust this workspace's .deepseek/config.toml (settings that loosen policy then apply)",
    "acp": "serve the agent over the Agent Client Protocol on stdio (Zed, JetBrains, CodeCompanion)",
}
# Global options that take a value (so the value is not mistaken for the command).
_VALUE_OPTIONS = {"--workspace", "--config", "--profile"}


def command_in(argv: list[str]) -> str | None:
    """The subcommand named in `argv` (skipping global options), if any."""
    tokens = iter(argv)
    for token in tokens:
        if token in _VALUE_OPTIONS:
            next(tokens, None)
        elif not token.startswith("-"):
            return token
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The CLI parser for `argv`: only the named command's module when it names a known
    command; else (`--help`, a typo) every command as a name and its summary, with no
    module imported; `None` builds the full parser (every module)."""
    import argparse
    import importlib

    from deepseek_ls.cli.common import add_global_options

    full = argv is None
    argv = argv or []
    command = command_in(argv)
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
    if command in COMMANDS:
        names = [COMMANDS[command]]
    elif full:
        names = list(dict.fromkeys(COMMANDS.values()))
    else:
        names = []
        if not (command is None and "--version" in argv and not {"-h", "--help"} & set(argv)):
            for name, summary in SUMMARIES.items():
                subparsers.add_parser(name, help=summary)
    for name in names:
        importlib.import_module(f"deepseek_ls.cli.{name}").register(subparsers)
    return parser


def _configure_logging(verbosity: int) -> None:
    import logging

    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    # stderr only: stdout is the LSP wire for `serve` and the data channel for `--json`.
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    from deepseek_ls.policy.log_gate import redact_handler

    for handler in logging.getLogger().handlers:
        if getattr(handler, "stream", None) is sys.stderr:
            redact_handler(handler)  # a record quoting a key (an error, a request) is logged masked
    # httpcore's DEBUG trace prints raw response headers, where a server may echo the API key
    # (a redirect's Location, a proxy's headers): never below INFO, whatever -v asks.
    logging.getLogger("httpcore").setLevel(max(level, logging.INFO))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if command_in(argv) == "config":
        # `config show` with nothing changed since last time (show_cache.py), or with plain
        # values only (show_fast.py): no pydantic.
        from deepseek_ls.cli import show_cache, show_fast

        if show_cache.serve(argv) or show_fast.serve(argv):
            return 0
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.argv = argv
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
        import logging

        from deepseek_ls.cli.common import exit_with

        if args.verbose:
            logging.getLogger("deepseek_ls.cli").exception("command failed")
        try:
            exit_with(error)
        finally:
            if not args.verbose and not hasattr(error, "user_message"):
                # Not one of our reported errors: a bug or an unexpected condition.
                print("deepseek-ls: run again with -v for the traceback", file=sys.stderr)
    finally:
        # The command's retry notices end with it (an in-process `main`: the tests): its terminal
        # may be gone, and a later model call elsewhere in the process would be written there.
        if (terminal_ui := sys.modules.get("deepseek_ls.cli.terminal_ui")) is not None:
            terminal_ui.withdraw_retries()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
