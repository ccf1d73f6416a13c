"""Yolo mode (autopilot, `run --mode yolo`, `agent_loop.mode = "yolo"`) runs only in a trusted workspace.

Yolo approves edits and allowlisted commands without asking, so a repository that was never trusted
(or whose config changed since) gets a clear refusal naming `deepseek-ls trust`: exit 2, no session,
no model request, no file changed. Trusted, the same command runs (the happy path is
`test_cli_resume.test_autopilot_applies_without_asking_and_chat_answers`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scenario_kit import APP, diff, plan_json, trust_workspace
from test_cli_resume import cli, env_for

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


def _untrusted(workspace: Path, env: dict) -> None:
    pass


def _trusted_then_config_changed(workspace: Path, env: dict) -> None:
    (workspace / ".deepseek").mkdir(exist_ok=True)
    (workspace / ".deepseek" / "config.toml").write_text("[router]\nthreshold_high = 0.9\n")
    trust_workspace(workspace, env)
    (workspace / ".deepseek" / "config.toml").write_text("[router]\nthreshold_high = 0.8\n")


def _trusted_then_mcp_json_planted(workspace: Path, env: dict) -> None:
    trust_workspace(workspace, env)
    (workspace / ".mcp.json").write_text('{"mcpServers": {}}')


def _other_workspace_trusted(workspace: Path, env: dict) -> None:
    other = workspace.parent / "other"
    other.mkdir()
    trust_workspace(other, env)


AUTOPILOT = ("autopilot", "Fix add")
# (how the workspace came to be untrusted, the yolo command, extra environment, what the refusal says)
CASES = [
    pytest.param(_untrusted, AUTOPILOT, {}, "not a trusted workspace", id="autopilot-never-trusted"),
    pytest.param(_untrusted, ("run", "--mode", "yolo", "Fix add"), {}, "not a trusted workspace", id="run-mode-yolo"),
    pytest.param(_untrusted, ("run", "Fix add"), {"DEEPSEEK_LS_AGENT_LOOP__MODE": "yolo"}, "not a trusted workspace",
                 id="run-default-mode-yolo"),
    pytest.param(_trusted_then_config_changed, AUTOPILOT, {}, "changed since you trusted it",
                 id="autopilot-config-changed-since-trust"),
    pytest.param(_trusted_then_mcp_json_planted, AUTOPILOT, {}, "changed since you trusted it",
                 id="autopilot-mcp-json-planted-since-trust"),
    pytest.param(_other_workspace_trusted, AUTOPILOT, {}, "not a trusted workspace",
                 id="autopilot-only-another-workspace-trusted"),
]


@pytest.mark.parametrize(("setup", "command", "extra_env", "why"), CASES)
def test_no_unapproved_exec_yolo_refused_in_untrusted_workspace(workspace, fake_deepseek_process, setup, command,
                                                                extra_env, why):
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q"])},
        {"match": {"role": "executor"}, "content": ADD_FIX},
    ])
    env = {**env_for(fake.base_url), "XDG_CONFIG_HOME": str(workspace.parent / "xdg"), **extra_env}
    setup(workspace, env)
    done = subprocess.run(cli(*command), cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "deepseek-ls trust" in done.stderr and why in done.stderr and "Traceback" not in done.stderr
    assert fake.requests() == []
    assert (workspace / "app.py").read_text() == APP
    assert not list((workspace / ".deepseek" / "sessions").glob("*/events.jsonl"))


async def test_no_unapproved_exec_core_refuses_new_yolo_session(tmp_path: Path, monkeypatch) -> None:
    """The agent itself (whatever adapter asks: LSP `mode: yolo`, ACP's yolo mode) refuses, before any session."""
    from deepseek_ls.agent import Agent
    from deepseek_ls.config_models import Config
    from deepseek_ls.trust import UntrustedWorkspace
    from deepseek_ls.ui_port import AutoApproveUI

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DEEPSEEK_LS_USER_CONFIG", raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    agent = Agent(root, Config(), llm=None, ui=AutoApproveUI())
    try:
        with pytest.raises(UntrustedWorkspace, match="deepseek-ls trust"):
            await agent.run("Fix add", mode="yolo")
        assert agent.store.list() == []
    finally:
        await agent.aclose()
