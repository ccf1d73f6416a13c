"""The editor flow with real-shaped troublesome answers: a step whose answer is cut off by the
output limit is continued and staged whole; unified diffs that fail twice fall back to
SEARCH/REPLACE blocks; the person sees both as status lines in the stream."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import APP, file_uri, open_doc, run

from deepseek_ls.lsp import names

PLAN = {"goal": "fix add", "assumptions": [], "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]}],
        "verification": ["python -m pytest -q"], "risk_notes": [], "confidence": 0.9}
FIX = "```diff\n--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```"
CUT = FIX.index("+    return") + 8
BLOCK = "app.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
WRONG = FIX.replace("-    return a - b", "-    return a * b")


def status_lines(state) -> list[str]:
    return [p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "")
            for p in state.notifications.get("deepseek/stream", [])
            if (p.get("channel") if isinstance(p, dict) else getattr(p, "channel", None)) == "status"]


async def staged_hunk(client, session_id: str, step_id: str, uri: str):
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id})
    assert outcome["status"] == "staged", outcome
    hunks = await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    (hunk,) = hunks.hunks
    return hunk


async def test_cut_off_answer_is_continued_then_staged_whole(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor", "contains": "cut off by the output limit"}, "content": FIX[CUT:]})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX[:CUT], "finish_reason": "length"})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP, version=1)
    planned = await run(client, names.CMD_PLAN, {"prompt": "fix add", "uri": uri})
    hunk = await staged_hunk(client, planned["session_id"], planned["plan"]["steps"][0]["step_id"], uri)
    assert (hunk.old_text, hunk.new_text) == ("def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")
    assert any("finish_reason=length" in line for line in status_lines(state))


async def test_failing_unified_diffs_fall_back_to_search_replace(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Switch format now"}, "content": BLOCK})
    fake_deepseek.add({"match": {"role": "executor"}, "content": WRONG, "repeat": True})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP, version=1)
    planned = await run(client, names.CMD_PLAN, {"prompt": "fix add", "uri": uri})
    hunk = await staged_hunk(client, planned["session_id"], planned["plan"]["steps"][0]["step_id"], uri)
    assert (hunk.old_text, hunk.new_text) == ("    return a - b\n", "    return a + b\n")
    assert hunk.located == "exact" and hunk.recounted  # a SEARCH/REPLACE block is a hunk without numbers
    assert any("SEARCH/REPLACE" in line for line in status_lines(state))
