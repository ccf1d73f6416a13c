"""`McpManager`: the workspace's MCP servers as one tool provider.

It owns one `McpConnection` per startable server, starts them lazily (the first time
the agent needs the tool list, all at once), answers `status()` for `deepseek-ls mcp
list`, the editors and health checks, and stops every server on `aclose()`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from deepseek_ls.config_models import Config, McpConfig
from deepseek_ls.tools.mcp.client import McpCallError, McpConnection, McpToolInfo, McpUnavailable
from deepseek_ls.tools.mcp.servers import McpApprovals, McpServerSet, McpServerSpec, approvals_path, load_servers


class McpManager:
    def __init__(
        self,
        root: Path,
        servers: McpServerSet,
        config: McpConfig,
        *,
        env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        deny_paths: list[str] | tuple[str, ...] | None = None,
    ) -> None:
        from deepseek_ls.config_models import DEFAULT_DENY_PATHS

        self.root = Path(root).resolve()
        # Secret locations (`policy.deny_paths`): resources a server returns from there are not shown.
        self.deny_paths = tuple(DEFAULT_DENY_PATHS if deny_paths is None else deny_paths)
        self.servers = servers
        self.config = config
        self.env = dict(os.environ if env is None else env)
        self.log_dir = log_dir
        self.connections: dict[str, McpConnection] = {
            name: self._connection(spec) for name, spec in servers.servers.items() if spec.startable
        }
        self._listed = False
        self._noticed = False

    def _connection(self, spec: Any) -> McpConnection:
        return McpConnection(
            spec,
            env=self.env,
            cwd=self.root,
            log_dir=self.log_dir,
            max_restarts=self.config.max_restarts,
            backoff_seconds=self.config.restart_backoff_seconds,
        )

    async def refresh(self, servers: McpServerSet) -> None:
        """New definitions or approvals (say, the person approved `.mcp.json`): start offering the
        newly startable servers, stop the ones no longer startable or whose definition changed."""
        self.servers = servers
        self._noticed = False
        for name in list(self.connections):
            spec = servers.servers.get(name)
            if spec is None or not spec.startable or spec.fingerprint != self.connections[name].spec.fingerprint:
                await self.connections.pop(name).stop()
        for name, spec in servers.servers.items():
            if spec.startable and name not in self.connections:
                self.connections[name] = self._connection(spec)

    @classmethod
    def from_config(
        cls,
        root: Path,
        config: Config,
        sources: Mapping[str, str] | None = None,
        *,
        workspace_config: Path | None = None,
        env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
        extra: Iterable[McpServerSpec] = (),
    ) -> "McpManager":
        """Servers of `config` (and `.mcp.json`); `sources`/`workspace_config` tell which came with the repo.
        `extra`: definitions given for this use alone (an ACP client's `session/new`), kept whatever
        `mcp.enabled` says, a name they share replaced."""
        approvals = McpApprovals(approvals_path(env))
        servers = (
            load_servers(
                root,
                config.mcp.servers,
                sources or {},
                workspace_config=workspace_config,
                read_workspace_json=config.mcp.read_workspace_json,
                approvals=approvals,
            )
            if config.mcp.enabled
            else McpServerSet()
        )
        servers.servers.update((spec.name, spec) for spec in extra)
        return cls(root, servers, config.mcp, env=env, log_dir=log_dir, deny_paths=config.policy.deny_paths)

    @classmethod
    def for_workspace(cls, root: Path, loaded: Any, state_dir: Path | None, *, env: Mapping[str, str] | None = None,
                      extra: Iterable[McpServerSpec] = ()) -> "McpManager":
        """From a `LoadedConfig` (which knows each value's layer); server logs under `<state>/mcp/`."""
        return cls.from_config(
            root,
            loaded.config,
            loaded.sources,
            workspace_config=loaded.workspace_path,
            env=env,
            log_dir=(state_dir / "mcp") if state_dir else None,
            extra=extra,
        )

    def take_notices(self) -> list[str]:
        """Once per set of definitions: what the person should know (servers waiting for approval)."""
        if self._noticed:
            return []
        self._noticed = True
        return [
            f"server {spec.name!r} from {spec.source} is not approved and will not start; approve it with "
            "`deepseek-ls mcp approve` (or the editor's \"Approve MCP servers\" command)"
            for spec in self.servers.pending_approval()
        ]

    @property
    def active(self) -> bool:
        return bool(self.connections)

    async def list_tools(self) -> tuple[list[McpToolInfo], list[str]]:
        """Start every startable server that is not running and collect its tools.

        Returns (the tools offered, one problem sentence per server that is unavailable)."""
        problems: list[str] = []

        async def one(conn: McpConnection) -> list[McpToolInfo]:
            try:
                await conn.ensure_started()
            except McpUnavailable as exc:
                problems.append(str(exc))
                return []
            return [t for t in conn.tools if self.offered(conn, t.name)]

        results = await asyncio.gather(*(one(c) for c in self.connections.values()))
        self._listed = True
        return [t for tools in results for t in tools], problems

    def offered(self, conn: McpConnection, tool: str) -> bool:
        cfg = conn.config
        if tool in cfg.deny_tools:
            return False
        return cfg.allow_tools is None or tool in cfg.allow_tools

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        conn = self.connections.get(server)
        if conn is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured, approved and enabled here")
        if not self.offered(conn, tool):
            raise McpCallError(f"MCP tool {tool!r} of {server!r} is not allowed by this server's allow/deny lists")
        return await conn.call(tool, arguments)

    async def current(self, server: str, tool: str) -> McpToolInfo | None:
        """The tool as the server lists it now (starting it if needed; a restarted server lists anew),
        None when it no longer offers it."""
        conn = self.connections.get(server)
        if conn is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured, approved and enabled here")
        await conn.ensure_started()
        return next((t for t in conn.tools if t.name == tool), None)

    def status(self) -> list[dict[str, Any]]:
        """One row per known server: what `mcp list`, health checks and the editors show."""
        rows = []
        for name, spec in sorted(self.servers.servers.items()):
            conn = self.connections.get(name)
            rows.append(
                {
                    "name": name,
                    "type": spec.config.type,
                    "source": spec.source,
                    "approved": spec.approved,
                    "enabled": spec.config.enabled,
                    "state": conn.state if conn else ("invalid" if spec.problem else "not started"),
                    "hint": None if conn else spec.state_hint,
                    "error": conn.error if conn else spec.problem,
                    "tools": [t.name for t in conn.tools] if conn else [],
                    "read_only_tools": [t.name for t in conn.tools if t.read_only] if conn else [],
                }
            )
        return rows

    async def aclose(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)
