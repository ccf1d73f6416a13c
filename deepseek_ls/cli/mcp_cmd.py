"""`deepseek-ls mcp list|test|approve|revoke`: the MCP servers the agent may use here."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from deepseek_ls.cli.common import add_command, exit_with, print_json, resolve_context


def register(subparsers: argparse._SubParsersAction) -> None:
    mcp = add_command(
        subparsers,
        "mcp",
        help="list, test and approve MCP servers (tools named mcp_<server>_<tool>)",
        description=(
            "MCP servers come from [mcp.servers.NAME] in the config and from .mcp.json at the\n"
            "workspace root. Servers defined by the repository (.mcp.json, .deepseek/config.toml)\n"
            "start programs, so they wait for `deepseek-ls mcp approve`. See docs/tools.md."
        ),
    )
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION", title="actions")
    ls = add_command(actions, "list", help="servers, their state and tools (starts the approved ones)", handler=_list)
    ls.add_argument("--no-start", action="store_true", help="do not start servers; show definitions only")
    test = add_command(actions, "test", help="start one server, list its tools, stop it", handler=_test)
    test.add_argument("name")
    approve = add_command(actions, "approve", help="approve the servers this repository defines", handler=_approve)
    approve.add_argument("--yes", action="store_true", help="approve without asking")
    add_command(actions, "revoke", help="withdraw every approval given for this workspace", handler=_revoke)


def _manager(args: argparse.Namespace) -> Any:
    from deepseek_ls.tools.mcp import McpManager

    ctx = resolve_context(args, create_state=False)
    return ctx, McpManager.for_workspace(ctx.root, ctx.loaded_config, ctx.state_dir)


def _list(args: argparse.Namespace) -> int:
    _, manager = _manager(args)
    for warning in manager.servers.warnings:
        print(f"deepseek-ls: {warning}", file=sys.stderr)

    async def go() -> tuple[list[Any], list[dict[str, Any]]]:
        try:
            tools = [] if args.no_start else (await manager.list_tools())[0]
            return tools, manager.status()  # the state while running, before they are stopped
        finally:
            await manager.aclose()

    tools, rows = asyncio.run(go())
    from deepseek_ls.tools.mcp.provider import tool_name

    offered = {t.server: [] for t in tools}
    for t in tools:
        offered[t.server].append({"name": tool_name(t.server, t.name), "read_only": t.read_only})
    if args.json:
        print_json([{**row, "offered": offered.get(row["name"], [])} for row in rows])
        return 0
    if not rows:
        print("no MCP servers configured ([mcp.servers.NAME] in the config, or .mcp.json)")
        return 0
    for row in rows:
        state = row["state"] if row["hint"] is None else row["hint"]
        print(f"{row['name']}  ({row['type']}, from {row['source']})  {state}")
        if row["error"]:
            print(f"    error: {row['error']}")
        for tool in offered.get(row["name"], []):
            mark = "read-only" if tool["read_only"] else "needs approval"
            print(f"    {tool['name']}  [{mark}]")
    return 0


def _test(args: argparse.Namespace) -> int:
    _, manager = _manager(args)
    spec = manager.servers.servers.get(args.name)
    if spec is None:
        exit_with(f"no MCP server named {args.name!r}; `deepseek-ls mcp list` shows them", code=2)
    conn = manager.connections.get(args.name)
    if conn is None:
        exit_with(f"MCP server {args.name!r} cannot start: {spec.state_hint}", code=2)

    async def go() -> int:
        try:
            await conn.ensure_started()
            print(f"{args.name}: started, {len(conn.tools)} tool(s)")
            for tool in conn.tools:
                print(f"    {tool.name}{'  [read-only]' if tool.read_only else ''}  {tool.description[:80]}")
            return 0
        except Exception as exc:  # noqa: BLE001 - reported as one line
            print(f"deepseek-ls: {exc}", file=sys.stderr)
            return 1
        finally:
            await manager.aclose()

    return asyncio.run(go())


def _approve(args: argparse.Namespace) -> int:
    from deepseek_ls.tools.mcp.servers import McpApprovals, approvals_path, describe

    ctx, manager = _manager(args)
    pending = manager.servers.pending_approval()
    if not pending:
        print("nothing to approve: no repository-defined MCP server is waiting")
        return 0
    print("This workspace defines MCP servers that start programs on your machine:")
    for spec in pending:
        d = describe(spec)
        env = f"  env: {', '.join(d['env'])}" if d["env"] else ""
        env += f"  headers: {', '.join(d['headers'])}" if d["headers"] else ""
        env += f"  reads: {', '.join('$' + v for v in d['variables'])}" if d["variables"] else ""
        print(f"  {d['name']}: {d['runs']}  (from {d['source']}){env}")
    if not args.yes:
        if not sys.stdin.isatty():
            exit_with("approval needs a terminal; re-run with --yes to approve non-interactively", code=2)
        answer = input("Approve them? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("not approved")
            return 1
    McpApprovals(approvals_path()).approve(ctx.root, pending)
    print(f"approved {len(pending)} server(s); an edited definition will need approving again")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from deepseek_ls.tools.mcp.servers import McpApprovals, approvals_path

    ctx = resolve_context(args, create_state=False)
    McpApprovals(approvals_path()).revoke(ctx.root)
    print(f"approvals withdrawn for {ctx.root}")
    return 0
