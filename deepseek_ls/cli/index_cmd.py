"""`deepseek-ls index build|update|status|query`: the code index (owned by the index issue, 5)."""

from __future__ import annotations

import argparse

from deepseek_ls.cli.common import add_command, not_available


def register(subparsers: argparse._SubParsersAction) -> None:
    index = add_command(
        subparsers,
        "index",
        help="build, update, inspect and query the code index",
        description="The workspace's tantivy code index, kept under .deepseek/index/.",
    )
    actions = index.add_subparsers(dest="index_command", metavar="ACTION", title="actions")
    add_command(
        actions,
        "build",
        help="build the index from scratch",
        handler=not_available("index build", 5),
    )
    update = add_command(
        actions,
        "update",
        help="re-index changed files (or the given paths)",
        handler=not_available("index update", 5),
    )
    update.add_argument("paths", nargs="*", help="files to re-index (default: every changed file)")
    add_command(
        actions,
        "status",
        help="say whether the index is fresh, stale, corrupt or missing",
        handler=not_available("index status", 5),
    )
    query = add_command(
        actions,
        "query",
        help="search the index",
        handler=not_available("index query", 5),
    )
    query.add_argument("query", help="the search query")
    query.add_argument("--top-k", type=int, default=10, help="number of files to return (default 10)")
    query.add_argument("--glob", dest="path_glob", help="only paths matching this glob")
    query.add_argument("--lang", help="only files of this language")
