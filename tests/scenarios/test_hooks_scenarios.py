"""Lifecycle hooks in a session, configured as Claude Code configures them (`.claude/settings.json`
used as it is): real shell and Python hook scripts for every event the agent fires, blocking by exit
code 2 and by JSON, context added to the request, the hooks' runs recorded and a replay that serves
their outcomes without running them again; a repository's hooks in an untrusted workspace never
run; a hook that hangs is stopped; a secret a hook prints never reaches the model or the log."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from scenario_kit import ScriptedUI, plan_json, scenario_config

from deepseek_ls.agent.replay import replay_session
from deepseek_ls.config_layers import user_config_path
from deepseek_ls.extensions.hook_runner import PromptBlocked
from deepseek_ls.trust import TrustStore, trust_file

PY = shlex.quote(sys.executable)
SECRET = "ghp_" + "Zq8rT3vLm2Xw9Yb4Nc7Hd1Kf6Gs5Pa0Je3Ui"  # a GitHub token's shape (made up)

# Python hooks: read Claude Code's JSON on stdin, keep it for the test, answer in JSON.
PROMPT_HOOK = """import json, pathlib, sys
data = json.load(sys.stdin)
pathlib.Path(".hooklog").mkdir(exist_ok=True)
pathlib.Path(".hooklog/prompt.json").write_text(json.dumps(data))
print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                         "additionalContext": "HOOK-CONTEXT: the team writes tests first"}}))
"""
GREP_DENY_HOOK = """import json, sys
data = json.load(sys.stdin)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                         "permissionDecisionReason": "JSON-DENY: searching is off today"}}))
"""
POST_READ_HOOK = """import json, sys
data = json.load(sys.stdin)
assert data["tool_name"] == "Read" and "tool_response" in data, data
print(json.dumps({"decision": "block", "reason": "POST-FEEDBACK: app.py is owned by the payments team"}))
"""
# A shell hook: blocks reading app.py with exit 2, its stderr the reason given to the model.
READ_GUARD = """#!/bin/sh
payload=$(cat)
mkdir -p .hooklog && printf '%s' "$payload" > .hooklog/pre.json
case "$payload" in *'"path": "app.py"'*) echo "BLOCKED-BY-HOOK: app.py is frozen" >&2; exit 2;; esac
exit 0
"""


def write(path: Path, text: str, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)
    return path


def settings(hooks: dict) -> str:
    return json.dumps({"permissions": {"allow": ["Read"]}, "hooks": hooks}, indent=2)


def command(cmd: str, **extra) -> dict:
    return {"type": "command", "command": cmd, **extra}


def tool_answers(request) -> list[dict]:
    return [json.loads(m["content"]) for m in request.body["messages"] if m.get("role") == "tool"]


def ran(agent, session_id: str) -> list[dict]:
    return [e.payload for e in agent.store.open(session_id).read() if e.kind == "HookRan@v1"]


async def until(condition, what: str) -> None:
    """Wait (bounded, never a fixed sleep) for `condition()`; fail naming `what`."""
    for _ in range(3000):  # 60 s: a sandboxed hook starts slowly on a loaded machine
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{what} did not happen")


@pytest.fixture
def hooked(workspace: Path) -> Path:
    """A workspace whose hooks are in Claude Code's `.claude/settings.json`, scripts beside it."""
    for name, text in (("prompt.py", PROMPT_HOOK), ("grep_deny.py", GREP_DENY_HOOK), ("post_read.py", POST_READ_HOOK)):
        write(workspace / ".claude/hooks" / name, text)
    write(workspace / ".claude/hooks/read-guard.sh", READ_GUARD, 0o755)
    py = f'{PY} "$CLAUDE_PROJECT_DIR"/.claude/hooks/'
    write(workspace / ".claude/settings.json", settings({
        "SessionStart": [{"hooks": [command("echo SESSION-START-CONTEXT: main is protected")]}],
        "UserPromptSubmit": [{"hooks": [command(py + "prompt.py")]}],
        "PreToolUse": [{"matcher": "Read", "hooks": [command('"$CLAUDE_PROJECT_DIR"/.claude/hooks/read-guard.sh')]},
                       {"matcher": "Grep|Glob", "hooks": [command(py + "grep_deny.py")]}],
        "PostToolUse": [{"matcher": "Read", "hooks": [command(py + "post_read.py")]}],
        "Stop": [{"hooks": [command("mkdir -p .hooklog && cat > .hooklog/stop.json")]}],
        "Notification": [{"hooks": [command("mkdir -p .hooklog && cat > .hooklog/notification.json")]}],
    }))
    return workspace


def trust(workspace: Path) -> None:
    TrustStore(trust_file(user_config_path())).trust(workspace)


async def test_claude_code_settings_hooks_block_add_context_and_replay_without_running(hooked, make_agent, fake_deepseek):
    trust(hooked)
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "fs_read", "arguments": {"path": "app.py"}},
                                      {"name": "fs_read", "arguments": {"path": "util.py"}},
                                      {"name": "fs_search_rg", "arguments": {"query": "def add"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": plan_json(("Fix", ["util.py"]))})
    agent = make_agent()
    sid, _plan = await agent.plan("fix add")

    first, after_tools = fake_deepseek.requests
    sent = json.dumps(first.body["messages"])
    assert "HOOK-CONTEXT: the team writes tests first" in sent  # UserPromptSubmit's additionalContext (JSON)
    assert "SESSION-START-CONTEXT: main is protected" in sent  # SessionStart's plain stdout
    blocked, read, searched = tool_answers(after_tools)
    assert blocked["error"] == ("blocked by a hook, not run: BLOCKED-BY-HOOK: app.py is frozen "
                                "(a PreToolUse hook: .claude/settings.json)")  # exit 2, stderr to the model
    assert "def add" not in json.dumps(blocked)  # the file was not read
    assert "def double" in read["value"]["content"]  # util.py was read: the guard let it through ...
    assert read["value"]["hooks"] == ("POST-FEEDBACK: app.py is owned by the payments team "
                                      "(a PostToolUse hook: .claude/settings.json)")  # ... and PostToolUse spoke
    assert searched["error"].startswith("blocked by a hook, not run: JSON-DENY: searching is off today")

    stdin = json.loads((hooked / ".hooklog/pre.json").read_text())  # what Claude Code gives a hook
    assert stdin["hook_event_name"] == "PreToolUse" and stdin["tool_name"] == "Read"
    assert stdin["session_id"] == sid and stdin["cwd"] == str(hooked.resolve())
    assert stdin["tool_input"]["file_path"] == str((hooked / "util.py").resolve())
    assert json.loads((hooked / ".hooklog/prompt.json").read_text())["prompt"] == "fix add"
    # Done once its run is recorded (the file exists as soon as the shell opens it, before it is written).
    await until(lambda: any(r["event"] == "Notification" for r in ran(agent, sid)), "the Notification hook")
    assert json.loads((hooked / ".hooklog/stop.json").read_text())["hook_event_name"] == "Stop"
    assert "plan" in json.loads((hooked / ".hooklog/notification.json").read_text())["message"]

    runs = ran(agent, sid)
    assert [(r["event"], r["outcome"]) for r in runs[:2]] == [("SessionStart", "ok"), ("UserPromptSubmit", "ok")]
    assert ("PreToolUse", "block", "block") in {(r["event"], r["outcome"], r["decision"]) for r in runs}
    assert ("PreToolUse", "block", "deny") in {(r["event"], r["outcome"], r["decision"]) for r in runs}
    assert all(r["source"] == ".claude/settings.json" for r in runs)

    # Replay serves what the hooks decided from the recording: no hook runs again.
    shutil.rmtree(hooked / ".hooklog")
    fake_deepseek.stop()
    report = await replay_session(hooked, agent.state_dir, scenario_config(), sid)
    assert report.ok, report.message
    assert not (hooked / ".hooklog").exists()
    await agent.aclose()


async def test_a_user_prompt_submit_hook_exiting_2_blocks_the_request_before_the_model(workspace, make_agent, fake_deepseek):
    """The person's own hooks (hooks.json beside the user config) run in any workspace, trusted or not."""
    write(user_config_path().parent / "hooks.json", json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        command("grep -q password && { echo 'PROMPT-BLOCKED: no passwords in prompts' >&2; exit 2; }; exit 0")]}]}}))
    agent = make_agent()
    with pytest.raises(PromptBlocked, match="PROMPT-BLOCKED: no passwords in prompts"):
        await agent.plan("set the admin password to hunter2")
    assert fake_deepseek.requests == []
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["util.py"]))})
    await agent.plan("fix add")  # the same hook lets another request through
    assert len(fake_deepseek.requests) == 1


async def test_no_unapproved_exec_an_untrusted_repositorys_hooks_never_run(workspace, make_agent, fake_deepseek):
    """A cloned repository's hooks are commands its author wrote: until the person trusts the
    workspace none runs, for any event, and the person is told once."""
    pwn = "touch PWNED"
    every = {event: [{"matcher": "*", "hooks": [command(pwn)]}] for event in
             ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Notification")}
    write(workspace / ".claude/settings.json", settings(every))
    write(workspace / ".deepseek/hooks.json", json.dumps({"hooks": every}))
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "fs_read", "arguments": {"path": "app.py"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": plan_json(("Fix", ["util.py"]))})
    ui = ScriptedUI()
    agent = make_agent(ui)
    sid, _ = await agent.plan("fix add")
    await agent.plan("fix add again") if fake_deepseek.add({"match": {"role": "planner"},
                                                             "content": plan_json(("Fix", ["util.py"]))}) is None else None
    await agent.aclose()
    assert not (workspace / "PWNED").exists()
    assert ran(agent, sid) == []
    said = [text for channel, text in ui.streamed if "ships hooks" in text]
    assert len(said) == 1 and ".claude/settings.json" in said[0] and ".deepseek/hooks.json" in said[0]


async def test_never_hang_a_hook_that_never_ends_is_stopped_and_said(workspace, make_agent, fake_deepseek):
    write(user_config_path().parent / "hooks.json", json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        command("sleep 600", timeout=1)]}]}}))
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["util.py"]))})
    ui = ScriptedUI()
    agent = make_agent(ui)
    sid, _ = await asyncio.wait_for(agent.plan("fix add"), 60)  # the bound is the hook's (1 s), not this
    [run] = [r for r in ran(agent, sid) if r["event"] == "UserPromptSubmit"]
    assert run["outcome"] == "timeout" and run["timed_out"] is True
    assert any("did not finish within 1 s and was stopped" in text for _, text in ui.streamed)
    assert len(fake_deepseek.requests) == 1  # the request went on without the hook


async def test_no_leak_a_secret_a_hook_prints_is_redacted_before_the_model_and_the_log(workspace, make_agent,
                                                                                         fake_deepseek):
    write(user_config_path().parent / "hooks.json", json.dumps({"hooks": {
        "UserPromptSubmit": [{"hooks": [command(f"echo 'deploy token: {SECRET}'")]}],
        "SessionStart": [{"hooks": [command(f"echo 'token {SECRET} is bad' >&2; exit 1")]}]}}))
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["util.py"]))})
    ui = ScriptedUI()
    agent = make_agent(ui)
    sid, _ = await agent.plan("fix add")
    [request] = fake_deepseek.requests
    assert "deploy token:" in json.dumps(request.body)  # the context arrived ...
    assert SECRET not in json.dumps(request.body)  # ... without the token
    log_text = "".join(p.read_text() for p in agent.state_dir.rglob("*.jsonl"))
    assert "HookRan@v1" in log_text and SECRET not in log_text
    assert any("exited 1" in text for _, text in ui.streamed)  # the failing hook is said ...
    assert not any(SECRET in text for _, text in ui.streamed)  # ... without the token


async def test_pre_compact_hook_fires_when_the_conversation_is_compacted(make_agent, fake_deepseek, workspace):
    """The compaction scenario of test_compaction.py with a PreCompact hook in the person's hooks.json."""
    from test_compaction import SUMMARY, _big, _config, _script

    for i in (1, 2, 3):
        _big(workspace, f"big{i}.py", f"big{i}")
    write(user_config_path().parent / "hooks.json", json.dumps({"hooks": {"PreCompact": [{"hooks": [
        command("cat > precompact.json")]}]}}))
    _script(fake_deepseek, [{"repeat": True, "content": json.dumps(SUMMARY)}])
    agent = make_agent(config=_config())
    view = await agent.run("Fix add")
    stdin = json.loads((workspace / "precompact.json").read_text())
    assert (stdin["hook_event_name"], stdin["trigger"]) == ("PreCompact", "auto")
    runs = [r for r in ran(agent, view["session_id"]) if r["event"] == "PreCompact"]
    assert runs and runs[0]["outcome"] == "ok"
    (workspace / "precompact.json").unlink()  # the fixture's replay must not write it again
