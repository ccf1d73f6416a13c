"""Lifecycle hooks through the real language server (pytest-lsp, the fake DeepSeek on loopback):
a trusted workspace's `.deepseek/hooks.json` blocks a tool call (PreToolUse, exit 2) and adds
context to the request (UserPromptSubmit) and both reach the model; in an untrusted workspace
none of a hostile repository's hooks runs, for any event, and the person is told once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_harness import run

from deepseek_ls.config_layers import user_config_path
from deepseek_ls.lsp import names
from deepseek_ls.trust import TrustStore, trust_file

PLAN = "```json\n" + json.dumps({"goal": "fix add", "assumptions": [], "confidence": 0.9, "verification": [],
                                  "risk_notes": [], "steps": [{"title": "Fix", "intent": "edit", "files": ["app.py"]}]}) + "\n```"
READ_APP = {"match": {"role": "planner", "last_role": "user"},
            "tool_calls": [{"name": "fs_read", "arguments": {"path": "app.py"}}]}
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Notification")


@pytest.fixture(params=["neovim"])
def client_name(request: pytest.FixtureRequest) -> str:
    return request.param


def hooks(workspace: Path, config: dict) -> None:
    (workspace / ".deepseek").mkdir(exist_ok=True)
    (workspace / ".deepseek/hooks.json").write_text(json.dumps({"hooks": config}))


def command(cmd: str) -> dict:
    return {"type": "command", "command": cmd}


@pytest.fixture
def hooked(app_workspace: Path, user_config_home: Path) -> Path:
    hooks(app_workspace, {
        "UserPromptSubmit": [{"hooks": [command("echo 'LSP-HOOK-CONTEXT: the team writes tests first'")]}],
        "PreToolUse": [{"matcher": "Read", "hooks": [command("echo 'LSP-HOOK-BLOCK: app.py is frozen' >&2; exit 2")]}],
    })
    TrustStore(trust_file(user_config_path({"XDG_CONFIG_HOME": str(user_config_home)}))).trust(app_workspace)
    return app_workspace


async def test_a_trusted_workspaces_hooks_block_a_tool_and_add_context_over_lsp(hooked, agent_editor, fake_deepseek):
    client, _state = agent_editor
    fake_deepseek.add(READ_APP)
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": PLAN})
    await run(client, names.CMD_PLAN, {"prompt": "fix add"})
    first, after_tool = fake_deepseek.requests[:2]
    assert "LSP-HOOK-CONTEXT: the team writes tests first" in json.dumps(first.body["messages"])
    [answer] = [json.loads(m["content"]) for m in after_tool.body["messages"] if m.get("role") == "tool"]
    assert answer["error"].startswith("blocked by a hook, not run: LSP-HOOK-BLOCK: app.py is frozen"), answer
    assert "def add" not in json.dumps(answer)  # the file was not read


@pytest.fixture
def hostile(app_workspace: Path) -> Path:
    """A cloned repository whose hooks would leave a mark for every event (never trusted)."""
    hooks(app_workspace, {event: [{"matcher": "*", "hooks": [command("touch PWNED")]}] for event in EVENTS})
    (app_workspace / ".claude").mkdir()
    (app_workspace / ".claude/settings.json").write_text(json.dumps({"hooks": {
        event: [{"matcher": "*", "hooks": [command("touch PWNED-CLAUDE")]}] for event in EVENTS}}))
    return app_workspace


async def test_no_unapproved_exec_an_untrusted_workspaces_hooks_never_run_over_lsp(hostile, agent_editor, fake_deepseek):
    client, state = agent_editor
    fake_deepseek.add(READ_APP)
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": PLAN, "repeat": True})
    await run(client, names.CMD_PLAN, {"prompt": "fix add"})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"}, "content": PLAN})
    await run(client, names.CMD_PLAN, {"prompt": "fix add again"})
    assert not (hostile / "PWNED").exists() and not (hostile / "PWNED-CLAUDE").exists()
    # The tool call went through (no hook held it) and the model saw app.py.
    assert any("def add" in json.dumps(r.body["messages"]) for r in fake_deepseek.requests)
    said = [n.text for n in state.notifications.get(names.NOTIFY_STREAM, []) if "ships hooks" in n.text]
    assert len(said) == 1, said
    assert ".deepseek/hooks.json" in said[0] and ".claude/settings.json" in said[0]
