"""MCP client: the person's Model Context Protocol servers as the agent's tools.

- `servers`: where definitions come from (`[mcp.servers.NAME]`, `.mcp.json`), `${VAR}`
  expansion, and approval of the ones that came with the repository;
- `client`: one live server (start, list, call, crash and hang handling, restart);
- `manager`: all of a workspace's servers, started lazily, stopped on close;
- `provider`: MCP tools as `Tool`s named `mcp_<server>_<tool>` under the usual policy.

The `mcp` SDK is imported only when a server actually starts.
"""

from deepseek_ls.tools.mcp.manager import McpManager

__all__ = ["McpManager"]
