"""MCP server definitions: TOML and `.mcp.json`, `${VAR}` expansion, and approval of repository servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepseek_ls.config import load_config
from deepseek_ls.config_models import McpServerConfig
from deepseek_ls.tools.mcp.provider import tool_name
from deepseek_ls.tools.mcp.servers import (
    McpApprovals,
    McpConfigError,
    McpServerSpec,
    expand,
    expanded,
    load_servers,
)


@pytest.fixture
def user_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    user = tmp_path / "user" / "config.toml"
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(user))
    return {"DEEPSEEK_LS_USER_CONFIG": str(user)}


def _servers(root: Path, env: dict[str, str], approvals: McpApprovals | None = None):
    loaded = load_config(root, env=env)
    return load_servers(
        root,
        loaded.config.mcp.servers,
        loaded.sources,
        workspace_config=loaded.workspace_path,
        approvals=approvals or McpApprovals(Path(env["DEEPSEEK_LS_USER_CONFIG"]).parent / "mcp-approvals.json"),
    )


def test_user_toml_server_is_trusted_and_workspace_ones_wait_for_approval(tmp_path, user_env):
    user = Path(user_env["DEEPSEEK_LS_USER_CONFIG"])
    user.parent.mkdir(parents=True)
    user.write_text('[mcp.servers.time]\ncommand = "mcp-server-time"\n')
    root = tmp_path / "ws"
    (root / ".deepseek").mkdir(parents=True)
    (root / ".deepseek" / "config.toml").write_text('[mcp.servers.planted]\ncommand = "sh"\nargs = ["-c", "touch /tmp/x"]\n')
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": "node", "args": ["srv.js"]}}}))

    found = _servers(root, user_env)
    assert found.servers["time"].origin == "user" and found.servers["time"].startable
    for name in ("planted", "repo"):
        spec = found.servers[name]
        assert spec.origin == "workspace" and not spec.approved and not spec.startable
        assert "deepseek-ls mcp approve" in spec.state_hint
    assert {s.name for s in found.pending_approval()} == {"planted", "repo"}


def test_approval_is_bound_to_the_exact_definition(tmp_path, user_env):
    root = tmp_path / "ws"
    root.mkdir()
    mcp_json = root / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": {"command": "node", "args": ["srv.js"]}}}))
    approvals = McpApprovals(tmp_path / "approvals.json")
    found = _servers(root, user_env, approvals)
    approvals.approve(root.resolve(), found.pending_approval())
    assert _servers(root, user_env, approvals).servers["repo"].approved

    # The repository changes what the approved server runs: approval is void.
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": {"command": "node", "args": ["evil.js"]}}}))
    assert not _servers(root, user_env, approvals).servers["repo"].approved
    # And approving one workspace says nothing about another with the same file.
    other = tmp_path / "other"
    other.mkdir()
    (other / ".mcp.json").write_text(mcp_json.read_text())
    assert not _servers(other, user_env, approvals).servers["repo"].approved


def test_mcp_json_shapes_from_other_agents_are_read(tmp_path, user_env):
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "web": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "bare": {"url": "http://127.0.0.1:9/mcp"},
        "off": {"command": "x", "disabled": True, "autoApprove": ["t"]},
        "broken": {"type": "stdio"},
        "notobj": 5,
    }}))
    found = _servers(root, user_env)
    assert found.servers["web"].config.type == "http" and found.servers["bare"].config.type == "http"
    assert found.servers["off"].config.enabled is False
    assert any("autoApprove" in w for w in found.warnings)
    assert "needs `command`" in (found.servers["broken"].problem or "")
    assert found.servers["notobj"].problem and not found.servers["notobj"].startable


def test_toml_definition_wins_a_name_over_mcp_json(tmp_path, user_env):
    root = tmp_path / "ws"
    root.mkdir()
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[mcp.servers.time]\ncommand = "mcp-server-time"\n')
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": {"command": "sh"}}}))
    loaded = load_config(root, config_path=cfg, env=user_env)
    found = load_servers(root, loaded.config.mcp.servers, loaded.sources, workspace_config=loaded.workspace_path,
                         approvals=McpApprovals(tmp_path / "a.json"))
    assert found.servers["time"].config.command == "mcp-server-time" and found.servers["time"].approved
    assert any("also defined" in w for w in found.warnings)


@pytest.mark.parametrize(
    ("text", "env", "want"),
    [
        pytest.param("Bearer ${TOKEN}", {"TOKEN": "t0k"}, "Bearer t0k", id="set"),
        pytest.param("${A}-${B}", {"A": "1", "B": "2"}, "1-2", id="two"),
        pytest.param("${MISSING:-fallback}", {}, "fallback", id="default"),
        pytest.param("${EMPTY:-fallback}", {"EMPTY": ""}, "fallback", id="empty-uses-default"),
        pytest.param("$HOME and $TOKEN", {"TOKEN": "x"}, "$HOME and $TOKEN", id="bare-dollar-untouched"),
    ],
)
def test_variable_expansion(text, env, want):
    assert expand(text, env, where="test") == want


def test_an_unset_variable_is_an_error_naming_server_and_variable():
    spec = McpServerSpec("web", McpServerConfig(type="http", url="http://x", headers={"Authorization": "Bearer ${GH_TOKEN}"}),
                         "cfg", "user")
    with pytest.raises(McpConfigError, match=r"'web' header Authorization uses \$\{GH_TOKEN\}"):
        expanded(spec, {})


def test_prefix_clash_between_servers_is_reported(tmp_path, user_env):
    root = tmp_path / "ws"
    root.mkdir()
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[mcp.servers."a.b"]\ncommand = "x"\n[mcp.servers.a_b]\ncommand = "y"\n')
    loaded = load_config(root, config_path=cfg, env=user_env)
    found = load_servers(root, loaded.config.mcp.servers, loaded.sources, workspace_config=loaded.workspace_path,
                         approvals=McpApprovals(tmp_path / "a.json"))
    assert sum(1 for s in found.servers.values() if s.problem and "clashes" in s.problem) == 1


@pytest.mark.parametrize(
    ("server", "tool", "want"),
    [
        pytest.param("time", "get_current_time", "mcp_time_get_current_time", id="plain"),
        pytest.param("every thing", "get-sum", "mcp_every_thing_get-sum", id="space-and-dash"),
        pytest.param("s", "x" * 100, ("mcp_s_" + "x" * 100)[:64], id="capped-at-64"),
        pytest.param("srv", "a.b/c", "mcp_srv_a_b_c", id="dots-and-slashes"),
    ],
)
def test_tool_names_are_valid_function_names(server, tool, want):
    name = tool_name(server, tool)
    assert name == want
    assert len(name) <= 64 and all(c.isalnum() or c in "_-" for c in name)


def test_unknown_keys_in_toml_server_tables_are_errors(tmp_path, user_env):
    from deepseek_ls.config import ConfigError

    root = tmp_path / "ws"
    root.mkdir()
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[mcp.servers.time]\ncommand = "x"\ncomand = "typo"\n')
    with pytest.raises(ConfigError, match="comand"):
        load_config(root, config_path=cfg, env=user_env)


def test_never_lose_an_approval_when_two_approve_at_once(tmp_path):
    """Two editors (or two of one server's worker threads) approving at the same moment: every
    approval is kept, none fails on the other's temporary file, a revoke drops only its own."""
    import threading

    path = tmp_path / "user" / "mcp-approvals.json"
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def approver(n: int) -> None:
        try:
            start.wait()
            for i in range(15):
                spec = McpServerSpec(f"s{i}", McpServerConfig(command="x"), "test", "workspace",
                                     fingerprint=f"fp-{n}-{i}")
                McpApprovals(path).approve(tmp_path / f"ws{n}", [spec])
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=approver, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    data = json.loads(path.read_text())
    assert {ws: len(servers) for ws, servers in data.items()} == {str(tmp_path / f"ws{n}"): 15 for n in range(6)}
    McpApprovals(path).revoke(tmp_path / "ws0")
    assert sorted(json.loads(path.read_text())) == sorted(str(tmp_path / f"ws{n}") for n in range(1, 6))
