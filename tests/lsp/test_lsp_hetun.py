"""Hetun mode through the real server: deepseek.plan (mode hetun) researches on the fake DeepSeek,
the mission document gets Approve mission / Reject / Modify… lenses, Modify re-plans from the
edited document, Approve runs the mission straight through (no hunk lenses: its changes arrive as
workspace/applyEdit on the editor's buffers, verified once saved), Undo mission reverts it in one
action; Reject runs nothing. Nothing the person typed is lost: the mission's edit is made against the
unsaved buffer, and the disk is written only by the editor's save."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lsp_harness import ADD_FIX, APP, BufferEditor, lenses, open_doc, replace_all, run, wait_until_async

from deepseek_ls.lsp import names

PLAN = {"goal": "make test_add pass", "assumptions": [], "risk_notes": ["touches app.py only"], "confidence": 0.9,
        "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]},
                  {"title": "Polish greet", "intent": "edit", "files": ["app.py"]}],
        "verification": ["python -m pytest -q"]}
PLAN_ONE_STEP = {**PLAN, "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]}]}
PLAN_MODIFIED = {**PLAN, "steps": [{"title": "Fix add only", "intent": "edit", "files": ["app.py"]}]}


def script(fake, plan: dict | None = None) -> None:
    fake.add({"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\nSLICE|tests/test_app.py\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: app.py"},
              "content": "FINDING|0.9|app.py:6 add returns a - b\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: tests/test_app.py"},
              "content": "FINDING|0.6|tests/test_app.py expects add(2, 3) == 5\n"})
    fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|line 6 subtracts"})
    fake.add({"match": {"role": "planner", "contains": "Request:"}, "content": "```json\n" + json.dumps(plan or PLAN) + "\n```"})


async def test_hetun_mission_modify_approve_verify_undo(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    script(fake_deepseek)
    fake_deepseek.add({"match": {"role": "planner", "contains": "modified the mission"},
                       "content": "```json\n" + json.dumps(PLAN_MODIFIED) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})

    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "mode": "hetun"})
    sid = planned["session_id"]
    assert planned["mission"]["files"][0]["path"] == "app.py"
    mission_doc = app_workspace / ".deepseek" / "missions" / f"{sid}.md"
    assert planned["mission_uri"] == mission_doc.as_uri()
    text = mission_doc.read_text()
    assert "# Mission v1" in text and "## Estimate" in text and "## Risks" in text and "touches app.py only" in text
    plan_doc = (app_workspace / ".deepseek" / "plans" / f"{sid}.md").read_text()
    assert "## Research (Hetun)" in plan_doc and "add returns a - b" in plan_doc and "confirmed" in plan_doc

    uri = mission_doc.as_uri()
    open_doc(client, uri, text, version=1)
    titles = [lens.command.title for lens in await lenses(client, uri)]
    assert titles == ["✔ Approve mission", "✖ Reject", "✎ Modify…"]
    # A Hetun session's step lens does not run before the mission is approved.
    shown = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": sid})
    assert shown.hetun.decision is None and len(shown.hetun.research.nodes) >= 4

    # Modify: the person edits the mission text in the document, then Modify… re-submits it.
    edited = text.replace("- app.py: step 1: Fix add; step 2: Polish greet", "- app.py: fix add only, leave greet")
    assert edited != text
    replace_all(client, uri, edited, version=2)
    modified = await run(client, names.CMD_MODIFY_MISSION, {"session_id": sid})
    assert modified["modified"] is True and modified["mission"]["version"] == 2
    assert "fix add only, leave greet" in modified["mission"]["text"]
    assert "# Mission v2" in mission_doc.read_text()

    editor = BufferEditor(client, state, app_workspace)
    approved = await run(client, names.CMD_APPROVE_MISSION, {"session_id": sid})
    # No per-hunk lenses: the mission ran straight through, its change arrived as one workspace/applyEdit
    # (app.py was not open: the editor opened it) and waits in the buffer for the person's save.
    assert approved["state"] == "Paused" and approved["unsaved"] == ["app.py"], approved
    assert approved["files"] == ["app.py"] and len(state.applied_edits) == 1
    assert "a + b" in editor.text("app.py") and "a - b" in (app_workspace / "app.py").read_text()
    editor.save("app.py")
    done = await wait_until_async(lambda: client.protocol.send_request_async(names.REQ_PLAN, {"session_id": sid}),
                                  lambda v: v.state in ("Completed", "Failed"))
    assert done.state == "Completed", done
    assert "a + b" in (app_workspace / "app.py").read_text()
    titles = [lens.command.title for lens in await lenses(client, uri)]
    assert titles == ["↶ Undo mission"]

    # Undo lands in the buffer too (workspace/applyEdit), never under it; the save writes it.
    undone = await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert undone["restored"] == ["app.py"] and editor.text("app.py") == APP
    assert "a + b" in (app_workspace / "app.py").read_text() and len(state.applied_edits) == 2
    editor.save("app.py")
    assert (app_workspace / "app.py").read_text() == APP
    assert [lens.command.title for lens in await lenses(client, uri)] == []


async def test_hetun_reject_runs_nothing(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, _ = agent_editor
    script(fake_deepseek)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "mode": "hetun"})
    rejected = await run(client, names.CMD_REJECT_MISSION, {"session_id": planned["session_id"]})
    assert rejected["decision"] == "reject" and rejected["state"] == "Paused"
    assert "mission rejected" in rejected["state_reason"]
    assert "a - b" in (app_workspace / "app.py").read_text()
    doc = (app_workspace / ".deepseek" / "missions" / f"{planned['session_id']}.md").read_text()
    assert "Decision: rejected" in doc


async def test_never_clobber_mission_applies_through_editor_over_unsaved_edit(
        agent_editor, fake_deepseek, app_workspace: Path) -> None:
    """The person changed greet in app.py without saving, then approves a mission that fixes add in
    app.py: the fix arrives as workspace/applyEdit against their buffer (their line kept), the disk is
    not written under the editor, and verification runs once they save."""
    client, state = agent_editor
    script(fake_deepseek, PLAN_ONE_STEP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "mode": "hetun"})
    sid = planned["session_id"]
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    editor = BufferEditor(client, state, app_workspace)
    typed = (app_workspace / "app.py").read_text().replace('"Hello " + name', '"Hi " + name')
    editor.open("app.py", typed)  # unsaved: the disk still says "Hello "
    on_disk = (app_workspace / "app.py").read_text()

    approved = await run(client, names.CMD_APPROVE_MISSION, {"session_id": sid})
    assert approved["state"] == "Paused" and approved["unsaved"] == ["app.py"], approved
    assert len(state.applied_edits) == 1
    assert (app_workspace / "app.py").read_text() == on_disk  # never written under the editor
    buffer = editor.text("app.py")
    assert '"Hi " + name' in buffer and "a + b" in buffer  # their typing kept, the fix applied

    editor.save("app.py")
    done = await wait_until_async(lambda: client.protocol.send_request_async(names.REQ_PLAN, {"session_id": sid}),
                                  lambda v: v.state in ("Completed", "Failed"))
    assert done.state == "Completed", done
    saved = (app_workspace / "app.py").read_text()
    assert '"Hi " + name' in saved and "a + b" in saved
    log = (app_workspace / ".deepseek" / "sessions" / sid / "events.jsonl").read_text().splitlines()
    applied = [json.loads(line)["payload"] for line in log if '"PatchApplied@v1"' in line]
    assert [p["via"] for p in applied] == ["workspace/applyEdit"]

    # Replay re-runs the session without an editor: the applyEdit and the wait for the save come from the log.
    replay = subprocess.run([sys.executable, "-m", "deepseek_ls", "replay", sid, "--rerun", "--json"],
                            cwd=app_workspace, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "DEEPSEEK_API_KEY": "test-key"})  # the server's user (user_config_home)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert json.loads(replay.stdout)["ok"], replay.stdout
