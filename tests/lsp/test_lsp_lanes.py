"""Teammate lanes from the editor: the real server, real git worktrees, the fake DeepSeek on loopback.

Toggle teammate mode → plan three steps (two independent) → run the first: the wave
runs in two lanes and both steps come back staged for review at once; the step
lenses name the lane and its state; `deepseek/status` lists the lanes. The lanes
never write the workspace: the files on disk are unchanged until hunks are accepted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lsp_harness import APP, file_uri, lenses, open_doc, run, wait_until

from deepseek_ls.lsp import names

UTIL = "def double(x):\n    return x * 2\n"
PLAN = {
    "goal": "three changes", "assumptions": [], "risk_notes": [], "confidence": 0.9,
    "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]},
              {"title": "Add triple", "intent": "edit", "files": ["util.py"]},
              {"title": "Greet with comma", "intent": "edit", "files": ["app.py"]}],
    "verification": ["git status"],
}
FIX_ADD = "```diff\n--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n```"
TRIPLE = ("```diff\n--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,5 @@\n def double(x):\n     return x * 2\n+\n+\n"
          "+def triple(x):\n+    return x * 3\n```")


def commit(root: Path) -> None:
    for args in (["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True)


async def test_run_step_runs_the_wave_in_lanes_and_stages_both(agent_editor, fake_deepseek, app_workspace: Path):
    client, state = agent_editor
    (app_workspace / "util.py").write_text(UTIL)
    commit(app_workspace)
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})

    toggled = await run(client, names.CMD_TOGGLE_TEAMMATE_MODE, {})
    assert toggled == {"teammate_mode": True}
    await wait_until(lambda: any(getattr(s, "teammate_mode", None) for s in state.notifications.get("deepseek/status", [])))
    app_uri, util_uri = file_uri(app_workspace), file_uri(app_workspace, "util.py")
    open_doc(client, app_uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "three changes", "uri": app_uri})
    sid = planned["session_id"]
    first, second, third = (s["step_id"] for s in planned["plan"]["steps"])

    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": sid, "step_id": first})
    assert outcome["status"] == "staged" and len(outcome["patch_ids"]) == 2  # both lanes' results, step order
    status = await client.protocol.send_request_async(names.REQ_STATUS, {})
    assert status.teammate_mode is True and status.lanes.running == 0 and status.lanes.queued == 0
    assert [(lane.lane, lane.step_id, lane.state) for lane in status.lanes.lanes] == [
        (1, first, "merged"), (2, second, "merged")]
    # Each step's lens says which lane ran it; the third step waits (it shares app.py with the first).
    titles = [lens.command.title for lens in await lenses(client, app_uri) + await lenses(client, util_uri)
              if lens.command.title.startswith("▶ Step")]
    assert any(t.startswith("▶ Step 1: Fix add") and t.endswith("· lane 1: merged") for t in titles), titles
    assert any(t.startswith("▶ Step 2: Add triple") and t.endswith("· lane 2: merged") for t in titles), titles
    assert any(t.startswith("▶ Step 3: Greet with comma") and "lane" not in t.split("]")[-1] for t in titles), titles
    # Staged for review only: the workspace is what it was.
    assert (app_workspace / "app.py").read_text() == APP and (app_workspace / "util.py").read_text() == UTIL
    hunks = await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": util_uri})
    assert len(hunks.hunks) == 1, "the lane's result is one hunk to review in util.py"
    branches = subprocess.run(["git", "branch", "--list", "lane/*"], cwd=app_workspace, capture_output=True, text=True)
    assert branches.stdout.strip() == ""  # worktrees and branches removed
