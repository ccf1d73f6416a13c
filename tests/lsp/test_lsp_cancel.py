"""`deepseek.cancel` (what :DeepSeekCancel and the VS Code command send) and
`$/cancelRequest` stop an ask or a plan while the model streams, before the
editor knows the session; the stream stops and the session is Paused."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsp_harness import ADD_FIX, APP, file_uri, lenses, open_doc, run, wait_until
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names

LONG = "word " * 400  # 2000 chars in 5-char chunks every 20 ms: ~8 s if not cancelled
PLAN = {
    "goal": "make test_add pass",
    "steps": [{"title": "Fix `add`", "intent": "edit", "files": ["app.py"]}],
    "verification": [],
    "confidence": 0.9,
}


def streamed(state) -> list:
    return state.notifications.get("deepseek/stream", [])


async def assert_stream_stopped(state) -> None:
    """No more than one chunk arrives once the command answered (uncancelled, ~25
    more would stream in the next half second)."""
    received = len(streamed(state))
    await asyncio.sleep(0.5)
    assert len(streamed(state)) <= received + 1


@pytest.mark.parametrize(
    ("command", "role", "args", "stopped_state"),
    [
        # An ask has no working state of its own: its session stays Idle.
        pytest.param(names.CMD_ASK, "ask", {"prompt": "explain add at length"}, "Idle", id="ask"),
        pytest.param(names.CMD_PLAN, "planner", {"prompt": "make test_add pass"}, "Paused", id="plan"),
    ],
)
async def test_deepseek_cancel_stops_a_streaming_command(
    agent_editor, fake_deepseek, command, role, args, stopped_state
) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": role}, "content": LONG, "chunk_chars": 5, "chunk_delay": 0.02})
    working = asyncio.ensure_future(run(client, command, args))
    await wait_until(lambda: len(streamed(state)) >= 3)

    # What the editors send: no session id (the editor may not know the new session yet).
    cancelled = await run(client, names.CMD_CANCEL, {})
    assert cancelled["cancelled"] is True
    (session_id,) = cancelled["sessions"]
    with pytest.raises(JsonRpcException, match="cancel") as raised:
        await asyncio.wait_for(working, 60)
    assert raised.value.code == types.LSPErrorCodes.RequestCancelled  # what editors end a cancelled command on
    text = "".join(n.text for n in streamed(state) if n.channel == "content")
    assert 0 < len(text) < len(LONG)
    await assert_stream_stopped(state)

    sessions = {s["session_id"]: s for s in (await run(client, names.CMD_SESSIONS, {}))["sessions"]}
    assert sessions[session_id]["state"] == stopped_state
    status = await client.protocol.send_request_async(names.REQ_STATUS, {})
    assert not [name for name in status.running if session_id in name]  # its watcher ended too
    # Nothing runs any more: a second cancel says so.
    again = await run(client, names.CMD_CANCEL, {})
    assert again["cancelled"] is False


async def test_cancel_by_the_session_id_the_status_announced(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": LONG, "chunk_chars": 5, "chunk_delay": 0.02})
    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "make test_add pass"}))
    # The plan's new session is announced (deepseek/status) as soon as it exists.
    announced = await wait_until(
        lambda: next((s.session_id for s in state.notifications.get("deepseek/status", []) if s.session_id), None)
    )
    await wait_until(lambda: len(streamed(state)) >= 3)
    cancelled = await run(client, names.CMD_CANCEL, {"session_id": announced})
    assert cancelled == {"cancelled": True, "session_id": announced, "sessions": [announced]}
    with pytest.raises(JsonRpcException, match="cancel"):
        await asyncio.wait_for(planning, 60)
    await assert_stream_stopped(state)


async def test_cancel_request_of_a_streaming_plan_answers_request_cancelled(agent_editor, fake_deepseek) -> None:
    """`$/cancelRequest` of the plan itself: the plan is answered RequestCancelled (-32800), the
    answer Neovim's plugin ends :DeepSeekPlan on (docs/neovim.md), and its stream stops."""
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": LONG, "chunk_chars": 5, "chunk_delay": 0.02})
    planning = asyncio.ensure_future(client.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND,
        types.ExecuteCommandParams(command=names.CMD_PLAN, arguments=[{"prompt": "make test_add pass"}]),
        msg_id="plan-to-cancel",
    ))
    await wait_until(lambda: len(streamed(state)) >= 3)
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="plan-to-cancel"))
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(planning, 60)
    assert raised.value.code == types.LSPErrorCodes.RequestCancelled, raised.value
    await assert_stream_stopped(state)


async def test_cancel_request_of_a_running_step_makes_it_runnable_again(
    agent_editor, fake_deepseek, app_workspace
) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": LONG, "chunk_chars": 5, "chunk_delay": 0.02})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP)
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
    session_id, step_id = planned["session_id"], planned["plan"]["steps"][0]["step_id"]
    before = len(streamed(state))
    running = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command=names.CMD_RUN_STEP, arguments=[{"session_id": session_id, "step_id": step_id}]),
            msg_id="step-to-cancel",
        )
    )
    await wait_until(lambda: len(streamed(state)) > before + 2)
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="step-to-cancel"))
    with pytest.raises(JsonRpcException, match="cancel"):
        await asyncio.wait_for(running, 60)
    await assert_stream_stopped(state)

    async def step_lens():
        found = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("▶ Step 1")]
        return found[0] if found and found[0].command.command == names.CMD_RUN_STEP else None

    lens = await wait_until_lens(step_lens)
    assert "pending" in lens.command.title
    plan = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": session_id})
    assert plan.state == "Paused" and plan.plan.steps[0].status == "pending"
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id})
    assert outcome["status"] == "staged"


async def wait_until_lens(ask, timeout: float = 60.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        lens = await ask()
        if lens is not None:
            return lens
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the step lens never offered Run again")
        await asyncio.sleep(0.05)
