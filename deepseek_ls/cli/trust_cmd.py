"""`deepseek-ls trust [--revoke | --list]`: trust this workspace's own config files."""

from __future__ import annotations

import argparse
import sys

from deepseek_ls.cli.common import add_command, print_json, resolve_root


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "trust",
        help="trust this workspace's .deepseek/config.toml (settings that loosen policy then apply)",
        description=(
            "A repository can ship .deepseek/config.toml. Until you trust the workspace, settings\n"
            "in it that loosen policy (approval modes, allowlisted commands, deny-list removals,\n"
            "yolo mode, another LLM endpoint, ...) are ignored. Trust is kept in your user config\n"
            "directory and covers the file as it is now: if it changes, trust it again.\n"
            "See docs/configuration.md (Workspace trust)."
        ),
        handler=_trust,
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--revoke", action="store_true", help="stop trusting this workspace")
    group.add_argument("--list", action="store_true", help="list trusted workspaces")


def _trust(args: argparse.Namespace) -> int:
    from deepseek_ls.config import load_config, user_config_path
    from deepseek_ls.trust import TrustStore, trust_file

    store = TrustStore(trust_file(user_config_path()))
    if args.list:
        entries = store.entries()
        if args.json:
            print_json(entries)
        else:
            for root, entry in sorted(entries.items()):
                print(f"{root}  (trusted {entry.get('trusted_at', '?')})")
        return 0
    root = resolve_root(args)
    if args.revoke:
        removed = store.revoke(root)
        message = f"{root}: no longer trusted" if removed else f"{root}: was not trusted"
    else:
        store.trust(root)
        message = f"{root}: trusted (its .deepseek/config.toml as it is now)"
    if args.json:
        loaded = load_config(root)
        print_json({"workspace": root, "trust": loaded.workspace_trust, "ignored": loaded.ignored_untrusted})
    else:
        print(message, file=sys.stderr)
    return 0
