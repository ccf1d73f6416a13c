"""Headless Neovim: a repository's MCP server is reported, approved and started through the plugin."""

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.nvim


def test_mcp_servers_in_health_and_commands(nvim, workspace, tmp_path):
    time_server = str(Path(sys.executable).parent / "mcp-server-time")
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": time_server}}}))
    result = nvim.run("mcp_spec.lua", cwd=workspace, timeout=200)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
