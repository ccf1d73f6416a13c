"""Cost in the editor: `deepseek/status` (pushed and requested), the hover on a step and
`deepseek.explainRouting` carry the tokens and money of the session and the step,
from the fake server's DeepSeek usage fields and the shipped deepseek-v4-flash preset's prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_harness import ADD_FIX, APP, file_uri, open_doc, run, wait_until
from lsprotocol import types

from deepseek_ls.lsp import names

PLAN = {
    "goal": "make test_add pass",
    "steps": [{"title": "Fix `add`", "intent": "edit", "files": ["app.py"]}],
    "verification": ["python -m pytest -q"],
    "confidence": 0.9,
}


def plain(value):
    """A notification's params (pygls objects) as plain JSON data."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


async def test_status_hover_and_explanation_show_tokens_and_cost(agent_editor, fake_deepseek, app_workspace: Path):
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
    session_id, step_id = planned["session_id"], planned["plan"]["steps"][0]["step_id"]
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id})
    assert outcome["status"] == "staged"

    def costed(status) -> bool:
        cost = (plain(status) or {}).get("cost") or {}
        return (cost.get("session") or {}).get("calls") == 2

    await wait_until(lambda: any(costed(s) for s in state.notifications.get(names.NOTIFY_STATUS, [])))
    pushed = next(plain(s) for s in state.notifications[names.NOTIFY_STATUS] if costed(s))
    session = pushed["cost"]["session"]
    assert session["tokens"]["cache_miss"] > 0 and session["tokens"]["output"] > 0
    assert session["cost"] > 0 and session["currency"] == "USD" and "$" in session["short"]
    # The step's spend: the executor's call, not the planner's (the test client mangles the step-id key).
    (step_spend,) = pushed["cost"]["steps"].values()
    assert step_spend["calls"] == 1
    assert pushed["cost"]["last_call"]["role"] == "executor"

    requested = await client.protocol.send_request_async(names.REQ_STATUS, {})
    assert requested.cost.session.cost == pytest.approx(session["cost"])

    # The context meter: the executor's prompt out of deepseek-v4-flash's window, and what fills it.
    meter = pushed["context"]
    assert meter["window"] == 1_000_000 and meter["role"] == "executor" and meter["text"].startswith("ctx ")
    assert meter["used"] == sum(meter["parts"].values()) and meter["parts"]["plan"] > 0
    assert meter["parts"]["instructions"] > 0 and meter["parts"]["context"] > 0  # the repo map, the file
    assert plain(requested)["context"]["used"] == meter["used"]
    # deepseek.compact on a session waiting on its hunks: before its next model call, with the meter now.
    calls = len(fake_deepseek.requests)
    compacted = await run(client, names.CMD_COMPACT, {"session_id": session_id, "focus": "the add fix"})
    assert compacted["pending"] is True and "before its next model call" in compacted["message"]
    assert compacted["context"]["used"] == meter["used"] and len(fake_deepseek.requests) == calls

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=4, character=0)))
    assert hover is not None
    assert "**cost** · session: " in hover.contents.value and "this step: " in hover.contents.value
    assert "out · $" in hover.contents.value

    explained = await run(client, names.CMD_EXPLAIN_ROUTING, {"session_id": session_id, "step_id": step_id})
    assert explained["cost"]["step"]["calls"] == 1 and explained["cost"]["session"]["calls"] == 2

    listed = await run(client, names.CMD_SESSIONS, {})
    (row,) = listed["sessions"]
    assert row["cost"]["calls"] == 2 and row["cost"]["cost"] == pytest.approx(session["cost"])
