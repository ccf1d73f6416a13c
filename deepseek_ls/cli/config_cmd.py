"""`deepseek-ls config show|edit|path`."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    config = add_command(
        subparsers,
        "config",
        help="show, edit or locate the configuration",
        description="The effective configuration: defaults < user < workspace < environment < --config < flags.",
    )
    actions = config.add_subparsers(dest="config_command", metavar="ACTION", title="actions")
    add_command(actions, "show", help="print the effective config and where each value came from",
                handler=not_available("config show", 2))
    add_command(actions, "edit", help="open the workspace config in $EDITOR (created with defaults)",
                handler=not_available("config edit", 2))
    add_command(actions, "path", help="print the user and workspace config paths",
                handler=not_available("config path", 2))
