"""What one ACP session's `Agent` is built with (`agent.assemble.build_agent`): the workspace's
config (as `deepseek-ls acp` was started: its `--config` and `--profile` too), index and MCP servers
(plus the ones the client passed in `session/new`), and the client's files when it offers them.

When the client offers both `fs.readTextFile` and `fs.writeTextFile`, files are read through it (so
its unsaved buffers are what the model sees) and changes are applied through it
(`client_apply.apply_through_client`) — both or neither, so a patch is never made against a buffer
and then written over the disk behind it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from deepseek_ls.acp.client_files import ClientFiles, ClientOverlay
from deepseek_ls.tools.mcp.servers import McpServerSpec

log = logging.getLogger(__name__)


def session_mcp_servers(servers: list[Any]) -> list[McpServerSpec]:
    """ACP `mcpServers` (stdio / http / sse) as our server definitions (the client's, so trusted)."""
    from deepseek_ls.config_models import McpServerConfig

    out: dict[str, McpServerSpec] = {}
    for s in servers:
        kind = getattr(s, "type", None) or "stdio"
        name = getattr(s, "name", "") or f"server{len(out) + 1}"
        try:
            if kind in ("http", "sse"):
                cfg = McpServerConfig(type=kind, url=s.url, headers={h.name: h.value for h in s.headers or []})
            elif kind == "stdio":
                cfg = McpServerConfig(command=s.command, args=list(s.args or []),
                                      env={e.name: e.value for e in s.env or []})
            else:
                continue
        except Exception as exc:  # noqa: BLE001 - one bad definition does not stop the session
            log.warning("ignoring MCP server %r from the client: %s", name, exc)
            continue
        out[name] = McpServerSpec(name, cfg, "the editor (session/new)", "user")
    return list(out.values())


def client_files(conn: Any, session_id: str, root: Path, client_capabilities: Any) -> ClientFiles | None:
    """The client's files when it offers to read and write them, else None (the disk)."""
    fs = getattr(client_capabilities, "fs", None)
    both = bool(fs is not None and getattr(fs, "read_text_file", False) and getattr(fs, "write_text_file", False))
    return ClientFiles(conn, session_id, root, asyncio.get_running_loop()) if both else None


def session_agent(root: Path, loaded: Any, ui: Any, mcp_servers: list[Any], *, files: ClientFiles | None) -> Any:
    """The session's agent (`agent.assemble.build_agent`); `loaded`: the config of `root`
    (`DeepSeekAcpAgent.config_for`)."""
    from deepseek_ls.acp.client_apply import apply_through_client, undo_through_client
    from deepseek_ls.agent.assemble import build_agent

    config = loaded.config.model_copy(deep=True)  # the session's own: its options change it (`options.py`)
    overlay = ClientOverlay(root, files) if files else None
    applier = None if files is None else (
        lambda patches, patch_id, hunk_ids=None: apply_through_client(patches, files, patch_id, hunk_ids))
    built: list[Any] = []  # the agent, once built: its restorer undoes through the client's files
    restorer = None if files is None else (
        lambda ids: asyncio.to_thread(undo_through_client, built[0].patches, files, ids))
    agent = build_agent(
        root, config, ui=ui, loaded=loaded, extra_mcp_servers=session_mcp_servers(mcp_servers),
        overlay=overlay, applier=applier, restorer=restorer,
        warn=lambda problem: print(f"deepseek-ls acp: {problem}", file=sys.stderr),
    )
    built.append(agent)
    return agent
