"""bash.run: allowlisted, approval-gated, bounded, with a scrubbed environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from tools_helpers import build_host

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.shell import scrubbed_env
from deepseek_ls.ui_port import AutoApproveUI


def policy(**kw) -> PolicyConfig:
    return PolicyConfig(allowlist=["git status", "sleep", "seq", "printenv"], **kw)


async def test_allowlisted_command_runs_after_approval(workspace: Path, sink: ListSink) -> None:
    ui = AutoApproveUI("allow_once")
    host = build_host(workspace, sink=sink, ui=ui, policy=policy())
    out = await host.call("bash.run", {"cmd": "git status --short"})
    assert out.ok and out.value["exit_code"] == 0 and out.value["argv"] == ["git", "status", "--short"]
    assert ui.approvals[0].command == "git status --short" and ui.approvals[0].kind == "bash.run"
    kinds = sink.kinds()
    assert kinds.index("ToolProposed@v1") < kinds.index("ToolApproved@v1") < kinds.index("ToolResult@v1")


async def test_denied_command_does_not_run(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI("deny"), policy=policy())
    out = await host.call("bash.run", {"cmd": "seq 3"})
    assert not out.ok and "denied" in out.error
    approved = [p for k, p in sink.events if k == "ToolApproved@v1"]
    assert approved[0]["answer"] == "deny"


async def test_timeout_kills_the_command(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), policy=policy(approval_mode="auto"))
    out = await host.call("bash.run", {"cmd": "sleep 30", "timeout": 0.5})
    assert out.ok and out.value["timed_out"] and out.value["exit_code"] is None
    assert out.value["duration_ms"] < 10_000


async def test_output_is_truncated_keeping_head_and_tail(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), policy=policy(approval_mode="auto", max_output_bytes=200))
    out = (await host.call("bash.run", {"cmd": "seq 100000"})).value
    assert out["truncated"] and out["stdout"].startswith("1\n2\n") and out["stdout"].rstrip().endswith("100000")
    assert "bytes truncated" in out["stdout"]


async def test_environment_is_scrubbed_of_credentials(workspace: Path, sink: ListSink, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("MY_PASSWORD", "x")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), policy=policy(approval_mode="auto"))
    env = (await host.call("bash.run", {"cmd": "printenv"})).value["stdout"]
    assert "HARMLESS_SETTING=visible" in env
    assert "DEEPSEEK_API_KEY" not in env and "MY_PASSWORD" not in env


def test_scrubbed_env_filters_by_name() -> None:
    env = scrubbed_env({"PATH": "/bin", "GITHUB_TOKEN": "t", "aws_secret": "s", "db_passwd": "p", "HOME": "/h"})
    assert env == {"PATH": "/bin", "HOME": "/h"}


async def test_cwd_must_stay_inside_the_workspace(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), policy=policy(approval_mode="auto"))
    out = await host.call("bash.run", {"cmd": "git status", "cwd": "../"})
    assert not out.ok and "'..'" in out.error
    ok = await host.call("bash.run", {"cmd": "git status", "cwd": "src"})
    assert ok.ok


async def test_never_mode_refuses_without_asking(workspace: Path, sink: ListSink) -> None:
    ui = AutoApproveUI("allow_once")
    host = build_host(workspace, sink=sink, ui=ui, policy=policy(approve_bash="never"))
    out = await host.call("bash.run", {"cmd": "git status"})
    assert not out.ok and ui.approvals == []


async def test_chaining_enabled_runs_allowlisted_chains_only(workspace: Path, sink: ListSink) -> None:
    chained = policy(approval_mode="auto", allow_shell_metacharacters=True)
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), policy=chained)
    out = await host.call("bash.run", {"cmd": "seq 2 && seq 3 3"})
    assert out.ok and out.value["stdout"] == "1\n2\n3\n"
    refused = await host.call("bash.run", {"cmd": "seq 2 && touch pwned"})
    assert not refused.ok and not (workspace / "pwned").exists()
