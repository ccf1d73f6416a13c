"""Helpers every CLI command module shares: global flags, context, output, errors."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

from deepseek_ls.workspace import find_workspace_root, state_dir

if TYPE_CHECKING:
    from deepseek_ls.config import LoadedConfig
    from deepseek_ls.config_models import Config

Handler = Callable[[argparse.Namespace], int]


def add_global_options(parser: argparse.ArgumentParser, *, suppress_defaults: bool) -> None:
    """The flags accepted before or after any subcommand.

    On subcommand parsers the defaults are suppressed so that a flag given before
    the subcommand is not overwritten by the subparser's default.
    """

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress_defaults else value

    group = parser.add_argument_group("global options")
    group.add_argument(
        "--workspace",
        metavar="DIR",
        default=default(None),
        help="workspace root (default: the nearest directory above the cwd holding .git, else the cwd)",
    )
    group.add_argument(
        "--config",
        metavar="PATH",
        dest="config_path",
        default=default(None),
        help="an extra TOML config file, applied after the workspace config and the environment",
    )
    group.add_argument(
        "--profile",
        metavar="NAME",
        default=default(None),
        help="model profile to use as the default ('fast') profile for this run, e.g. max_think",
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default(0),
        help="log more to stderr (-v info, -vv debug)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print machine-readable JSON on stdout (commands that print data)",
    )


def add_command(
    subparsers: argparse._SubParsersAction,
    name: str,
    *,
    help: str,
    description: str | None = None,
    handler: Handler | None = None,
) -> argparse.ArgumentParser:
    """Create a subcommand parser that also accepts the global flags."""
    parser = subparsers.add_parser(
        name,
        help=help,
        description=description or help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_global_options(parser, suppress_defaults=True)
    if handler is not None:
        parser.set_defaults(func=handler)
    else:
        # A group: without a subcommand, `main` prints this parser's help.
        parser.set_defaults(group_parser=parser)
    return parser


@dataclass(frozen=True)
class CliContext:
    root: Path
    state_dir: Path
    loaded_config: "LoadedConfig"

    @property
    def config(self) -> "Config":
        return self.loaded_config.config


def resolve_root(args: argparse.Namespace) -> Path:
    """The workspace root: `--workspace`, else the nearest directory above the cwd holding `.git`."""
    workspace = getattr(args, "workspace", None)
    if not workspace:
        return find_workspace_root()
    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        exit_with(f"--workspace {workspace}: not a directory", code=2)
    return root


def resolve_context(args: argparse.Namespace, *, create_state: bool = True) -> CliContext:
    """Workspace root, its `.deepseek/` state dir and the effective config for this run.

    Raises `deepseek_ls.config.ConfigError` on a bad config (`main` reports it).
    """
    from deepseek_ls.config import load_config

    root = resolve_root(args)
    loaded = load_config(
        root,
        config_path=Path(args.config_path) if getattr(args, "config_path", None) else None,
        profile=getattr(args, "profile", None),
    )
    warning = loaded.trust_warning()
    if warning:
        print(warning, file=sys.stderr)
    return CliContext(root=root, state_dir=state_dir(root, create=create_state), loaded_config=loaded)


def print_json(obj: Any) -> None:
    """Print one JSON document on stdout (pydantic models and paths are converted)."""
    json.dump(jsonable(obj), sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


def jsonable(obj: Any) -> Any:
    """`obj` with pydantic models and paths made JSON-ready."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


def exit_with(error: BaseException | str, *, code: int = 1) -> NoReturn:
    """Report `error` on stderr as one readable message and exit.

    Errors may carry `user_message` and `exit_code` (e.g. `LLMError`, `ConfigError`).
    """
    if isinstance(error, str):
        message = error
    else:
        message = getattr(error, "user_message", None) or str(error) or type(error).__name__
        code = int(getattr(error, "exit_code", code) or code)
    print(f"deepseek-ls: error: {message}", file=sys.stderr)
    raise SystemExit(code)
