"""`/review` over ACP with the official TypeScript SDK's client (a client we did not write): the
command is advertised, the findings come back as a tool call whose locations are their files and
lines and as the agent's message, nothing is written; a missing base and an answer that is never
findings are the turn's error (the client exits non-zero), nothing to review is said."""

from __future__ import annotations

import json
import subprocess

from acp_kit import agent_env, events_of, fix_add_workspace, run_sdk_client, said, updates_of

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

FINDING = {"file": "app.py", "start_line": 6, "severity": "error", "category": "bug", "message": "add subtracts"}


def test_review_command_sends_findings_with_locations(tmp_path):
    root = fix_add_workspace(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    changed = (root / "app.py").read_text().replace("a - b", "a - b - 1")
    (root / "app.py").write_text(changed)
    answer = {"match": {"role": "reviewer"}, "content": "```json\n" + json.dumps({"findings": [FINDING]}) + "\n```"}
    not_findings = {"match": {"role": "reviewer"}, "content": "Looks good to me!", "repeat": True}
    with FakeDeepSeek([answer, not_findings]) as fake:
        report, code = run_sdk_client(tmp_path, agent_env(fake, tmp_path), [
            {"op": "new", "cwd": str(root)},
            {"op": "prompt", "text": "/review"},
            {"op": "prompt", "text": "/review --base no-such-branch"},
            {"op": "prompt", "text": "/review --staged"},
            {"op": "prompt", "text": "/review app.py"},
        ], agent_cwd=root)
    commands = [c["name"] for u in updates_of(report, "available_commands_update") for c in u["availableCommands"]]
    assert "review" in commands
    first, missing, nothing, incomplete = report["steps"][1:5]
    assert first["result"]["stopReason"] == "end_turn", first
    call, failed = [u for u in updates_of(report, "tool_call") if u["toolCallId"].startswith("review-")]
    assert call["locations"] == [{"path": str(root / "app.py"), "line": 6}]
    assert call["status"] == "completed" and "1 finding" in call["title"]
    assert "add subtracts" in said(report)
    assert "no such revision: 'no-such-branch'" in missing["error"]["message"]
    assert nothing["result"]["stopReason"] == "end_turn", nothing
    assert "nothing to review: the staged changes has no text changes" in said(report)
    error = incomplete["error"]
    assert error["message"].startswith("review incomplete: app.py: the model's answer was not findings"), error
    assert error["data"]["kind"] == "review_incomplete" and error["data"]["sessionId"]
    assert failed["status"] == "failed" and "not reviewed app.py" in failed["content"][0]["content"]["text"]
    assert code != 0  # the SDK client exits non-zero: one of its requests failed
    assert (root / "app.py").read_text() == changed  # a review writes nothing
    assert report["writes"] == []
    kinds = [e["kind"] for e in events_of(root)]  # both reviews recorded and costed, the bad base never
    assert kinds.count("ReviewStarted@v1") == 2 and "LLMCall@v1" in kinds
    assert not {"PatchStaged@v1", "PatchApplied@v1"} & set(kinds)
