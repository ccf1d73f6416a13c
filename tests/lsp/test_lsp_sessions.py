"""Plan document, comments feeding a revision, skipping a step, and resuming a
session in a new server process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lsp_harness import file_uri, lenses, open_doc, run, start_client, wait_until
from lsprotocol import types

from deepseek_ls.lsp import names

PLAN = {
    "goal": "tidy app",
    "steps": [
        {"title": "Fix `add`", "intent": "edit", "files": ["app.py"]},
        {"title": "Polish `greet`", "intent": "edit", "files": ["app.py"]},
    ],
    "verification": [],
    "confidence": 0.9,
}
REVISED = {**PLAN, "steps": [*PLAN["steps"], {"title": "Document `add`", "intent": "edit", "files": ["app.py"]}]}


def _plan_reply(plan: dict, **match) -> dict:
    return {"match": {"role": "planner", **match}, "content": "```json\n" + json.dumps(plan) + "\n```"}


async def test_comments_in_the_plan_document_feed_the_revision(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, _ = agent_editor
    fake_deepseek.add(_plan_reply(PLAN))
    planned = await run(client, names.CMD_PLAN, {"prompt": "tidy app"})
    session_id = planned["session_id"]
    second = planned["plan"]["steps"][1]["step_id"]

    # Revise… with nothing said yet opens the plan document instead of calling the model.
    requests_before = len(fake_deepseek.requests)
    nothing = await run(client, names.CMD_REVISE_PLAN, {"session_id": session_id, "step_id": second, "feedback": ""})
    assert nothing["revised"] is False and len(fake_deepseek.requests) == requests_before
    shown = await run(client, names.CMD_SHOW_PLAN, {"session_id": session_id})
    doc_uri = shown["uri"]
    assert [d.uri for d in client.shown_documents] == [doc_uri, doc_uri]
    doc_path = app_workspace / ".deepseek" / "plans" / f"{session_id}.md"
    text = doc_path.read_text()

    # The person opens the plan document and writes a comment under step 2 (unsaved).
    lines = text.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("## Step 2"))
    lines.insert(heading + 4, "> also document add in its docstring")
    open_doc(client, file_uri(app_workspace, f".deepseek/plans/{session_id}.md"), "\n".join(lines) + "\n")
    plan_doc_lenses = await lenses(client, file_uri(app_workspace, f".deepseek/plans/{session_id}.md"))
    assert {lens.range.start.line for lens in plan_doc_lenses if lens.command.title.startswith("▶ Step 2")} == {heading}

    fake_deepseek.add(_plan_reply(REVISED, last_contains="also document add in its docstring"))
    revised = await run(client, names.CMD_REVISE_PLAN, {"session_id": session_id, "step_id": second, "feedback": ""})
    assert revised["revised"] is True and "also document add in its docstring" in revised["feedback"]
    assert revised["plan"]["version"] == 2 and len(revised["plan"]["steps"]) == 3

    second = revised["plan"]["steps"][1]["step_id"]  # a revision renews unfinished steps
    skipped = await run(client, names.CMD_SKIP_STEP, {"session_id": session_id, "step_id": second})
    assert skipped["status"] == "skipped"
    plan = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": session_id})
    assert [s.status for s in plan.plan.steps] == ["pending", "skipped", "pending"]
    titles = [lens.command.title for lens in await lenses(client, file_uri(app_workspace))]
    assert any(t.startswith("▶ Step 2: Polish `greet`") and "skipped" in t for t in titles)


async def test_a_session_resumes_in_a_new_server(
    fake_deepseek, app_workspace: Path, client_name: str, server_env: dict[str, str]
) -> None:
    env = {**server_env, "DEEPSEEK_BASE_URL": fake_deepseek.base_url,
           "PATH": os.path.dirname(sys.executable) + os.pathsep + server_env.get("PATH", "")}
    options = {"index": {"enabled": False}}
    fake_deepseek.add(_plan_reply(PLAN))
    client, _, _ = await start_client(app_workspace, client_name, env, initialization_options=options)
    planned = await run(client, names.CMD_PLAN, {"prompt": "tidy app"})
    await client.shutdown_session()
    await client.stop()

    client, state, _ = await start_client(app_workspace, client_name, env, initialization_options=options)
    try:
        listed = await run(client, names.CMD_SESSIONS, {})
        assert [s["session_id"] for s in listed["sessions"]] == [planned["session_id"]]
        resumed = await run(client, names.CMD_RESUME, {"session_id": planned["session_id"][:13]})
        assert resumed["session_id"] == planned["session_id"] and resumed["state"] == "Paused"
        titles = [lens.command.title for lens in await lenses(client, file_uri(app_workspace))]
        assert any(t.startswith("▶ Step 1: Fix `add`") for t in titles)
        status = await wait_until(lambda: state.notifications.get("deepseek/status"))
        assert status[-1].session_id == planned["session_id"]
        # The server's vocabulary, shown by the clients as sent (agent/state.py).
        assert (status[-1].state_label, status[-1].busy, status[-1].working) == ("paused", False, False)
        assert resumed["state_label"] == listed["sessions"][0]["state_label"] == "paused"
        undo = None
        try:
            await run(client, names.CMD_UNDO, {})
        except Exception as error:  # noqa: BLE001 - nothing was applied to disk
            undo = str(error)
        assert undo is not None and "nothing to undo" in undo
        assert any(m.type == types.MessageType.Error and "nothing to undo" in m.message for m in client.messages)
    finally:
        await client.shutdown_session()
        await client.stop()
