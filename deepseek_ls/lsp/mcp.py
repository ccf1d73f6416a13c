"""MCP servers in the editor: their state (`deepseek.mcpStatus`) and approving the ones the
repository defines (`deepseek.mcpApprove`, which asks the person with `window/showMessageRequest`)."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.server import DeepSeekServer

APPROVE = "Approve"
NOT_NOW = "Not now"


def _services(ls: DeepSeekServer) -> Any:
    if ls.services is None:
        raise LookupError("deepseek-ls is not initialized yet")
    return ls.services


async def mcp_status_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Servers, where each was defined, state and tools. `{"start": true}` starts the approved ones first."""
    services = _services(ls)
    manager = services.mcp
    start = params.parse_args(params.McpStatusArgs, args).start
    if start:
        await manager.list_tools()
    from deepseek_ls.tools.mcp.provider import tool_name
    from deepseek_ls.tools.mcp.servers import describe

    rows = manager.status()
    for row in rows:
        conn = manager.connections.get(row["name"])
        row["offered"] = [
            {"name": tool_name(t.server, t.name), "read_only": t.read_only}
            for t in (conn.tools if conn else [])
            if manager.offered(conn, t.name)
        ]
    return {
        "servers": rows,
        "pending": [describe(s) for s in manager.servers.pending_approval()],
        "warnings": list(manager.servers.warnings),
    }


async def mcp_approve_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Ask the person to approve the repository's MCP servers, showing exactly what would run."""
    from deepseek_ls.tools.mcp.servers import McpApprovals, approvals_path, describe

    services = _services(ls)
    servers = await asyncio.to_thread(services.mcp_servers)
    pending = servers.pending_approval()
    if not pending:
        return {"approved": [], "message": "no repository-defined MCP server is waiting for approval"}
    lines = [
        f"{d['name']}: {d['runs']} (from {d['source']})"
        + (f"; reads {', '.join('$' + v for v in d['variables'])}" if d["variables"] else "")
        for d in map(describe, pending)
    ]
    message = (
        "This workspace defines MCP servers that start programs on your machine:\n"
        + "\n".join(lines)
        + "\nApprove them for this workspace?"
    )
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning,
        message=message[:2000],
        actions=[types.MessageActionItem(title=APPROVE), types.MessageActionItem(title=NOT_NOW)],
    )
    chosen = await ls.window_show_message_request_async(params)
    if getattr(chosen, "title", None) != APPROVE:
        return {"approved": [], "message": "not approved"}
    await asyncio.to_thread(McpApprovals(approvals_path()).approve, ls.root, pending)
    await services.mcp.refresh(await asyncio.to_thread(services.mcp_servers))
    return {"approved": [s.name for s in pending], "message": f"approved {len(pending)} MCP server(s)"}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_MCP_STATUS, mcp_status_command)
    command(server, names.CMD_MCP_APPROVE, mcp_approve_command)
