"""Helpers for the MCP tests (a plain module, imported by a name no other test directory uses)."""

from __future__ import annotations

from pathlib import Path


def children_running(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains `marker` (to find or check a server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if marker in cmdline and status != "Z":
            found.append(int(entry.name))
    return found


def watch_tool_calls(monkeypatch) -> "asyncio.Event":
    """An event set once a tool call has been handed to an MCP session (from then on its request
    is on the way to the server, and the server dying fails that call). Tests that kill a server
    mid-call wait for it instead of sleeping: a fixed sleep on a loaded machine could kill the
    server before the call was made, and the call then restarted it and succeeded."""
    import asyncio

    from mcp import ClientSession

    started = asyncio.Event()
    real = ClientSession.call_tool

    async def call_tool(self, *args, **kwargs):
        started.set()
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(ClientSession, "call_tool", call_tool)
    return started
