"""Hetun mode through the real server: deepseek.plan (mode hetun) researches on the fake DeepSeek,
the mission document gets Approve mission / Reject / Modify… lenses, Modify re-plans from the
edited document, Approve runs the mission straight through (no hunk lenses, file written, verified),
Undo mission reverts it in one action; Reject runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import ADD_FIX, file_uri, lenses, open_doc, replace_all, run

from deepseek_ls.lsp import names

PLAN = {"goal": "make test_add pass", "assumptions": [], "risk_notes": ["touches app.py only"], "confidence": 0.9,
        "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]},
                  {"title": "Polish greet", "intent": "edit", "files": ["app.py"]}],
        "verification": ["python -m pytest -q"]}
PLAN_MODIFIED = {**PLAN, "steps": [{"title": "Fix add only", "intent": "edit", "files": ["app.py"]}]}


def script(fake) -> None:
    fake.add({"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\nSLICE|tests/test_app.py\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: app.py"},
              "content": "FINDING|0.9|app.py:6 add returns a - b\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: tests/test_app.py"},
              "content": "FINDING|0.6|tests/test_app.py expects add(2, 3) == 5\n"})
    fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|line 6 subtracts"})
    fake.add({"match": {"role": "planner", "contains": "Request:"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})


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

    approved = await run(client, names.CMD_APPROVE_MISSION, {"session_id": sid})
    assert approved["state"] == "Completed", approved
    assert "a + b" in (app_workspace / "app.py").read_text()
    assert approved["files"] == ["app.py"]
    assert not state.applied_edits  # no per-hunk workspace/applyEdit: the mission ran straight through
    titles = [lens.command.title for lens in await lenses(client, uri)]
    assert titles == ["↶ Undo mission"]

    undone = await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert undone["restored"] == ["app.py"] and "a - b" in (app_workspace / "app.py").read_text()


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


async def test_never_clobber_approve_refuses_with_unsaved_mission_file(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, _ = agent_editor
    script(fake_deepseek)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "mode": "hetun"})
    open_doc(client, file_uri(app_workspace), "def add(a, b):\n    return 'unsaved'\n", version=1)
    try:
        await run(client, names.CMD_APPROVE_MISSION, {"session_id": planned["session_id"]})
        raise AssertionError("approve ran with an unsaved mission file")
    except Exception as exc:  # the JSON-RPC error carries the message
        assert "save or revert app.py" in str(exc)
    assert "a - b" in (app_workspace / "app.py").read_text()
