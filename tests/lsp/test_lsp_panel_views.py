"""What a panel reads to rebuild itself: `deepseek/transcript` (prompts and answers
with reasoning, model, routing explanation, tokens and cost per answer) and
`deepseek/pendingHunks` (every pending hunk, grouped by file)."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import ADD_FIX, APP, file_uri, open_doc, run

from deepseek_ls.lsp import names
from deepseek_ls.lsp.param_models import to_plain

PLAN = {
    "goal": "make test_add pass",
    "steps": [{"title": "Fix `add`", "intent": "edit", "files": ["app.py"]}],
    "verification": [],
    "confidence": 0.9,
}


async def request(client, method: str, params: dict):
    return to_plain(await client.protocol.send_request_async(method, params))


async def test_transcript_has_each_answer_with_reasoning_model_why_and_cost(agent_editor, fake_deepseek):
    client, state = agent_editor
    assert await request(client, names.REQ_TRANSCRIPT, {}) is None  # no session yet
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It **adds** `a` and `b`.",
                       "reasoning_content": "The user asks about add."})
    answer = await run(client, names.CMD_ASK, {"prompt": "what does add do?"})
    sid = answer["session_id"]
    got = await request(client, names.REQ_TRANSCRIPT, {"session_id": sid})
    assert got["session_id"] == sid and got["state"] == "Completed"
    user, assistant = got["turns"]
    assert (user["role"], user["content"]) == ("user", "what does add do?")
    assert assistant["role"] == "assistant" and assistant["content"] == "It **adds** `a` and `b`."
    assert assistant["reasoning"] == "The user asks about add."
    assert assistant["model"] == answer["model"]
    # The same explanation the hover and explainRouting give.
    explained = await run(client, names.CMD_EXPLAIN_ROUTING, {"session_id": sid})
    assert assistant["routing"]["text"] == explained["text"] and assistant["routing"]["decision_id"] == explained["decision_id"]
    spend = assistant["spend"]
    assert spend["calls"] == 1 and spend["tokens"]["output"] > 0 and spend["tokens"]["cache_miss"] > 0
    assert spend["cost"] > 0 and "$" in spend["text"]
    # What streamed live is what the transcript keeps.
    streamed = [to_plain(p) for p in state.notifications.get(names.NOTIFY_STREAM, [])]
    assert "".join(p["text"] for p in streamed if p["channel"] == "content" and p["session_id"] == sid) == assistant["content"]
    assert "".join(p["text"] for p in streamed if p["channel"] == "reasoning" and p["session_id"] == sid) == assistant["reasoning"]


async def test_pending_hunks_lists_every_pending_hunk_by_file_until_decided(agent_editor, fake_deepseek, app_workspace: Path):
    client, _ = agent_editor
    assert await request(client, names.REQ_PENDING_HUNKS, {}) == {"files": [], "count": 0}
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
    sid, step_id = planned["session_id"], planned["plan"]["steps"][0]["step_id"]
    await run(client, names.CMD_RUN_STEP, {"session_id": sid, "step_id": step_id})
    got = await request(client, names.REQ_PENDING_HUNKS, {})
    assert got["count"] == 1
    (entry,) = got["files"]
    assert entry["uri"] == uri and entry["path"] == "app.py"
    (hunk,) = entry["hunks"]
    assert hunk["status"] == "pending" and "return a + b" in hunk["new_text"] and hunk["session_id"] == sid
    assert (await request(client, names.REQ_PENDING_HUNKS, {"session_id": "someone-else"}))["count"] == 0
    # The planner's and the executor's answers are in the transcript, the executor's with its step.
    turns = (await request(client, names.REQ_TRANSCRIPT, {}))["turns"]
    assert [(t["role"], t["agent_role"]) for t in turns] == [("user", "planner"), ("assistant", "planner"), ("assistant", "executor")]
    assert turns[2]["step_id"] == step_id and turns[2]["spend"]["calls"] == 1
    await run(client, names.CMD_REJECT_HUNK, {"patch_id": hunk["patch_id"], "hunk_id": hunk["hunk_id"]})
    assert await request(client, names.REQ_PENDING_HUNKS, {}) == {"files": [], "count": 0}


async def test_always_answers_transcript_of_an_unknown_session_with_an_error(agent_editor):
    client, _ = agent_editor
    try:
        await request(client, names.REQ_TRANSCRIPT, {"session_id": "0190000000000000000000000000dead"})
    except Exception as error:  # noqa: BLE001 - the JSON-RPC error is the answer
        assert "0190000000000000000000000000dead" in str(error) or "session" in str(error).lower()
    else:
        raise AssertionError("an unknown session must be an error, not an empty transcript")
