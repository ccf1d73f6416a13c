"""`deepseek/attention`: the editor is told when a session waits for the person (a question, a plan
to review) and when a wait ends (the count a badge shows goes back down), and a request that stopped
is told to a plain LSP client as one `window/showMessage`, never its waits (they are on screen
already). One editor (Neovim's capabilities, no `deepseekAttention`) for the whole file."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsp_harness import run, wait_until

from deepseek_ls.lsp import names

PLAN = {"goal": "change the greeting", "assumptions": [], "confidence": 0.9, "verification": [], "risk_notes": [],
        "steps": [{"title": "Make greet formal", "intent": "edit", "files": ["app.py"]}]}
QUESTION = "Which greeting style?"


@pytest.fixture(params=["neovim"])
def client_name(request: pytest.FixtureRequest) -> str:
    return request.param


def attention(state) -> list[Any]:
    return state.notifications.get(names.NOTIFY_ATTENTION, [])


async def test_waits_and_a_stopped_request_reach_the_editor(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": f"ASK_USER|{QUESTION}"})
    fake_deepseek.add({"match": {"role": "planner", "contains": "The user answered: formal"},
                       "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    received: list[Any] = []
    client.feature(names.NOTIFY_QUESTION)(lambda params: received.append(params))

    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "Change the greeting"}))
    (question,) = await wait_until(lambda: received)
    waiting = await wait_until(lambda: [a for a in attention(state) if a.kind == "waiting"])
    assert waiting[0].pending == 1 and QUESTION in waiting[0].message
    assert waiting[0].session_id == question.session_id
    await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "formal"})
    await planning
    kinds = [(a.kind, a.pending) for a in attention(state)]
    assert ("answered", 0) in kinds  # the badge goes back to nothing
    plan_ready = await wait_until(lambda: [a for a in attention(state) if "plan for you to review" in a.message])
    assert plan_ready[0].kind == "waiting" and plan_ready[0].session_id == question.session_id
    # A plain client sees its waits already (the question's own message): nothing said twice.
    assert not [m for m in client.messages if "plan for you to review" in m.message]

    # A request that stops while the person looks away: told, and a plain client gets one message.
    fake_deepseek.add({"match": {"role": "planner"}, "fault": {"status": 400}})
    with pytest.raises(Exception):
        await run(client, names.CMD_PLAN, {"prompt": "Rename greet"})
    stopped = await wait_until(lambda: [a for a in attention(state) if a.kind == "finished"])
    assert "stopped (Failed)" in stopped[0].message
    shown = await wait_until(lambda: [m for m in client.messages if "stopped (Failed)" in m.message])
    assert len(shown) == 1
