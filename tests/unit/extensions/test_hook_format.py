"""Claude Code's hook format read as it is: matchers against our tools' names, exit codes and JSON
answers, and configuration files with problems named (the rest still used)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepseek_ls.extensions.hooks import interpret, load_hooks, matches, shipped


@pytest.mark.parametrize(("matcher", "tool", "expected"), [
    ("Read", "fs.read", True), ("Edit|Write", "patch.stage", True), ("Write", "patch.apply", True),
    ("Bash", "bash.run", True), ("Grep", "index.query", True), ("LS", "fs.list", True), ("", "bash.run", True),
    ("*", "fs.read", True), ("fs.read", "fs.read", True), ("fs_read", "fs.read", True), ("Bash", "fs.read", False),
    ("Rea", "fs.read", False), ("mcp__gh__.*", "mcp__gh__issue", True), ("Edit(", "patch.stage", False),
])
def test_matchers_name_our_tools_by_claude_codes_names(matcher, tool, expected):
    assert matches(matcher, tool) is expected


def test_exit_codes_and_json_answers_mean_what_they_mean_in_claude_code():
    assert interpret("PreToolUse", 2, "ignored", "no rm\n").reason == "no rm"
    assert interpret("PreToolUse", 2, "", "").blocks
    failed = interpret("PreToolUse", 1, "", "boom")
    assert failed.outcome == "error" and not failed.blocks and "exited 1: boom" in failed.reason
    assert interpret("UserPromptSubmit", 0, "plain context", "").context == "plain context"
    assert interpret("PreToolUse", 0, "plain text", "").context == ""  # stdout is context only where Claude reads it so
    deny = interpret("PreToolUse", 0, json.dumps({"hookSpecificOutput": {
        "permissionDecision": "deny", "permissionDecisionReason": "why"}}), "")
    assert (deny.outcome, deny.decision, deny.reason) == ("block", "deny", "why")
    allow = interpret("PreToolUse", 0, json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}}), "")
    assert (allow.outcome, allow.decision) == ("ok", "allow")
    legacy = interpret("PreToolUse", 0, json.dumps({"decision": "block", "reason": "old"}), "")
    assert (legacy.decision, legacy.reason) == ("deny", "old")
    stop = interpret("Stop", 0, json.dumps({"continue": False, "stopReason": "enough", "systemMessage": "hi"}), "")
    assert (stop.stop, stop.message) == ("enough", "hi")
    assert interpret("PreToolUse", 0, json.dumps({"decision": "maybe"}), "").outcome == "error"


def test_files_with_problems_are_named_and_the_other_hooks_load(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(tmp_path / "user" / "config.toml"))
    (tmp_path / "user").mkdir()
    (tmp_path / "user/hooks.json").write_text("{not json")
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude/settings.json").write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5},
                                                     {"type": "prompt", "prompt": "judge"}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": "x"}]}]}}))
    found = load_hooks(ws, trusted=True)
    assert [(h.event, h.command, h.matcher, h.timeout) for h in found.hooks] == [("PreToolUse", "guard.sh", "Bash", 5.0)]
    said = "\n".join(found.problems)
    assert "hooks.json: it is not valid JSON (line 1" in said
    assert "of type 'prompt' is not run" in said and "'SubagentStop' is not an event" in said
    assert load_hooks(ws, trusted=False).hooks == []  # an untrusted workspace's are not read ...
    assert shipped(ws) == [".claude/settings.json"]  # ... but named for the notice
