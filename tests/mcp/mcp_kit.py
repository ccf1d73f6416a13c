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
