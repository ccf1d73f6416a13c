"""Why max-think (hover and deepseek.explainRouting) and cancelling long work."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp_harness import ADD_FIX, APP, file_uri, lenses, open_doc, run, wait_until
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names

PLAN = {
    "goal": "make test_add pass",
    "steps": [{"title": "Fix `add`", "intent": "edit", "files": ["app.py"]}],
    "verification": ["python -m pytest -q"],
    "confidence": 0.9,
}


async def _hover(client, uri: str, line: int) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=0)
        )
    )


async def test_hover_explains_an_escalation_and_a_max_think_hunk(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, _ = agent_editor
    # Two invalid plans: re-asked once, then escalated to max-think, which answers.
    fake_deepseek.add({"match": {"role": "planner"}, "content": "I am not a plan"})
    fake_deepseek.add({"match": {"role": "planner"}, "content": "still not a plan"})
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
    session_id, step_id = planned["session_id"], planned["plan"]["steps"][0]["step_id"]

    hover = await _hover(client, uri, 4)  # the step lens sits on `def add`
    assert hover is not None
    text = hover.contents.value
    assert "max-think" in text and "escalation" in text
    assert "threshold" in text and "INVALID_PLAN" in text
    assert await _hover(client, uri, 1) is None  # nothing to explain there

    explained = await run(client, names.CMD_EXPLAIN_ROUTING, {"session_id": session_id})
    assert explained["profile"] == "max_think" and explained["escalation"] is True
    assert "INVALID_PLAN" in explained["reason_codes"]

    # Force max-think by setting: the executor's hunk then explains itself on hover.
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"deepseek": {"router": {"force_profile": "max_think"}}})
    )
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id})
    assert outcome["status"] == "staged"
    hover = await _hover(client, uri, 5)  # the hunk's changed line
    assert hover is not None and "FORCED_BY_CONFIG" in hover.contents.value
    assert "max-think" in hover.contents.value
    hunks = await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    assert hunks.hunks[0].profile == "max_think"


async def test_cancel_request_stops_a_streaming_answer(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    long_answer = "word " * 400
    fake_deepseek.add({"match": {"role": "ask"}, "content": long_answer, "chunk_chars": 5, "chunk_delay": 0.02})
    msg_id = "ask-to-cancel"
    future = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command=names.CMD_ASK, arguments=[{"prompt": "explain add at length"}]),
            msg_id=msg_id,
        )
    )
    await wait_until(lambda: len(state.notifications.get("deepseek/stream", [])) >= 3)
    client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException, match="cancel"):
        await asyncio.wait_for(future, 60)
    streamed = "".join(n.text for n in state.notifications["deepseek/stream"] if n.channel == "content")
    assert 0 < len(streamed) < len(long_answer)
    # The work itself stopped: uncancelled, ~25 more chunks would stream in the next 0.5 s.
    received = len(state.notifications["deepseek/stream"])
    await asyncio.sleep(0.5)
    assert len(state.notifications["deepseek/stream"]) <= received + 1
    # And the server keeps serving.
    assert (await client.protocol.send_request_async(names.REQ_STATUS, {})) is not None


async def test_cancelling_the_progress_stops_planning(agent_editor, fake_deepseek, client_name: str) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "x" * 2000, "chunk_chars": 5, "chunk_delay": 0.02})
    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "make test_add pass"}))
    token = await wait_until(
        lambda: next(
            (t for t, reports in client.progress_reports.items() if reports and "planning" in getattr(reports[0], "title", "")),
            None,
        )
    )
    await wait_until(lambda: state.notifications.get("deepseek/stream"))
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(JsonRpcException, match="cancel"):
        await asyncio.wait_for(planning, 60)
    end = await wait_until(lambda: [r for r in client.progress_reports[token] if isinstance(r, types.WorkDoneProgressEnd)])
    assert end[0].message == "cancelled"
    sessions = await run(client, names.CMD_SESSIONS, {})
    assert [s["state"] for s in sessions["sessions"]] == ["Paused"]


async def test_deepseek_cancel_stops_the_running_step(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": "y" * 2000, "chunk_chars": 5, "chunk_delay": 0.02})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
    session_id, step_id = planned["session_id"], planned["plan"]["steps"][0]["step_id"]
    streamed_before = len(state.notifications.get("deepseek/stream", []))
    running = asyncio.ensure_future(run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id}))
    await wait_until(lambda: len(state.notifications.get("deepseek/stream", [])) > streamed_before + 2)
    step_lens = await _step_lens(client, uri)
    assert "running" in step_lens.command.title and step_lens.command.command != names.CMD_RUN_STEP
    cancelled = await run(client, names.CMD_CANCEL, {"session_id": session_id})
    assert cancelled["cancelled"] is True and cancelled["session_id"] == session_id
    with pytest.raises(JsonRpcException, match="cancel"):
        await asyncio.wait_for(running, 60)
    plan = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": session_id})
    assert plan.state == "Paused"
    # The stopped step is runnable again: pending, and its lens offers Run.
    assert plan.plan.steps[0].status == "pending"
    step_lens = await _step_lens(client, uri)
    assert step_lens.command.command == names.CMD_RUN_STEP and "pending" in step_lens.command.title
    # Running it again works (the fake answers the executor anew: nothing to change this time).
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id})
    assert outcome["status"] == "staged"


async def _step_lens(client, uri: str) -> types.CodeLens:
    found = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("▶ Step 1")]
    assert len(found) == 1, [lens.command.title for lens in await lenses(client, uri)]
    return found[0]
