"""`deepseek-ls mcp ...` as a user runs it: a real CLI process and a real MCP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).parent / "deepseek-ls")


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {**os.environ, "DEEPSEEK_LS_USER_CONFIG": str(tmp_path / "user" / "config.toml")}
    return root, env


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "--workspace", str(root), *args], env=env, capture_output=True, text=True, timeout=120)


def test_mcp_list_with_a_server_in_the_config_file(ws, tmp_path, time_server):
    root, env = ws
    cfg = tmp_path / "mcp.toml"
    cfg.write_text(f'[mcp.servers.time]\ncommand = "{time_server}"\n')
    out = cli(root, env, "--config", str(cfg), "mcp", "list")
    assert out.returncode == 0, out.stderr
    assert "mcp_time_get_current_time  [read-only]" in out.stdout
    rows = json.loads(cli(root, env, "--config", str(cfg), "mcp", "list", "--json").stdout)
    assert rows[0]["name"] == "time" and rows[0]["state"] == "ready" and rows[0]["source"] == str(cfg)
    assert {"name": "mcp_time_get_current_time", "read_only": True} in rows[0]["offered"]


def test_a_repository_mcp_json_runs_nothing_until_approved(ws, tmp_path, time_server):
    root, env = ws
    canary = tmp_path / "started"
    # A server that would leave a canary if it ever ran, beside the real one.
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": time_server},
        "planted": {"command": sys.executable, "args": ["-c", f"open({str(canary)!r}, 'w').write('ran')"]},
    }}))
    listed = cli(root, env, "mcp", "list")
    assert listed.returncode == 0
    assert "not approved" in listed.stdout and "mcp_time_get_current_time" not in listed.stdout
    assert not canary.exists()
    refused = subprocess.run([CLI, "--workspace", str(root), "mcp", "approve"], env=env, capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "--yes" in refused.stderr and not canary.exists()

    approved = cli(root, env, "mcp", "approve", "--yes")
    assert approved.returncode == 0 and "planted" in approved.stdout and sys.executable in approved.stdout
    listed = cli(root, env, "mcp", "list")
    assert "mcp_time_get_current_time  [read-only]" in listed.stdout

    # Editing the approved definition voids the approval.
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": time_server, "args": ["--x"]}}}))
    assert "not approved" in cli(root, env, "mcp", "list").stdout


def test_mcp_test_names_a_broken_server_and_exits_non_zero(ws, tmp_path):
    root, env = ws
    cfg = tmp_path / "mcp.toml"
    cfg.write_text(f'[mcp.servers.broken]\ncommand = "{tmp_path / "nope"}"\n')
    out = cli(root, env, "--config", str(cfg), "mcp", "test", "broken")
    assert out.returncode == 1 and "'broken' could not start" in out.stderr
    unknown = cli(root, env, "--config", str(cfg), "mcp", "test", "other")
    assert unknown.returncode == 2 and "no MCP server named 'other'" in unknown.stderr
