"""Clarifying questions answered in the editor: the planner asks a free-text
question, the client receives `deepseek/question`, answers with
`deepseek.answer`, and the plan is made with the answer in the planner's next
request; `deepseek.cancel` cancels a waiting question."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import ADD_FIX, SERVER_COMMAND, EditorState, install_editor_handlers, run, wait_until
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from deepseek_ls.lsp import names

PLAN = {
    "goal": "change the greeting",
    "assumptions": [],
    "steps": [{"title": "Make greet formal", "intent": "edit", "files": ["app.py"]}],
    "verification": [],
    "risk_notes": [],
    "confidence": 0.9,
}
QUESTION = "Which greeting style?"


def record_questions(client) -> list[Any]:
    received: list[Any] = []

    def on_question(params: Any) -> None:
        received.append(params)

    client.feature(names.NOTIFY_QUESTION)(on_question)
    return received


@pytest_asyncio.fixture
async def declaring_editor(fake_deepseek, app_workspace: Path, client_name: str, server_env) -> AsyncIterator[LanguageClient]:
    """An editor whose capabilities say it answers `deepseek/question` itself."""
    env = {
        **server_env,
        "DEEPSEEK_BASE_URL": fake_deepseek.base_url,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + server_env.get("PATH", ""),
    }
    client = await ClientServerConfig(server_command=SERVER_COMMAND, server_env=env).start()
    install_editor_handlers(client, EditorState())
    capabilities = client_capabilities(client_name)
    capabilities.experimental = {names.EXPERIMENTAL_QUESTIONS: True}
    uri = from_fs_path(str(app_workspace))
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=app_workspace.name)],
            initialization_options={"index": {"enabled": False}, "llm": {"max_retries": 0}},
        )
    )
    yield client
    await client.shutdown_session()
    await client.stop()


def planner_messages(request) -> str:
    return json.dumps(request.body.get("messages", []))


async def test_free_text_question_is_answered_from_the_editor(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": f"ASK_USER|{QUESTION}"})
    fake_deepseek.add(
        {"match": {"role": "planner", "contains": "The user answered: formal, with a title"},
         "content": "```json\n" + json.dumps(PLAN) + "\n```"}
    )
    questions = record_questions(client)

    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "Change the greeting"}))
    (question,) = await wait_until(lambda: questions)
    assert question.question == QUESTION and question.choices is None and question.session_id
    # Listed while waiting; the fallback message names the command and the id.
    listed = await client.protocol.send_request_async(names.REQ_PENDING_QUESTIONS, {})
    assert [q.question_id for q in listed.questions] == [question.question_id]
    shown = await wait_until(lambda: [m for m in client.messages if QUESTION in m.message])
    assert names.CMD_ANSWER in shown[0].message and question.question_id in shown[0].message

    answered = await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "formal, with a title"})
    assert answered == {"question_id": question.question_id, "session_id": question.session_id, "answered": True}
    planned = await asyncio.wait_for(planning, 60)

    assert planned["session_id"] == question.session_id
    assert [s["title"] for s in planned["plan"]["steps"]] == ["Make greet formal"]
    first, second = [r for r in fake_deepseek.requests if r.role == "planner"]
    assert "The user answered" not in planner_messages(first)
    assert f"You asked: {QUESTION}" in planner_messages(second)
    assert "The user answered: formal, with a title" in planner_messages(second)
    assert (await client.protocol.send_request_async(names.REQ_PENDING_QUESTIONS, {})).questions == []
    with pytest.raises(Exception, match="No pending question"):
        await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "again"})


async def test_cancel_of_the_session_cancels_its_question(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": f"ASK_USER|{QUESTION}"})
    questions = record_questions(client)

    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "Change the greeting"}))
    (question,) = await wait_until(lambda: questions)
    result = await run(client, names.CMD_CANCEL, {"session_id": question.session_id})
    assert result["cancelled"] is True
    with pytest.raises(Exception):
        await asyncio.wait_for(planning, 60)
    assert (await client.protocol.send_request_async(names.REQ_PENDING_QUESTIONS, {})).questions == []
    assert len([r for r in fake_deepseek.requests if r.role == "planner"]) == 1
    view = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": question.session_id})
    # deepseek.cancel stops the planning command as a whole, like any cancel: Paused
    # (resumable). Only answering the question with null returns the session to Idle.
    assert view.state == "Paused"


async def test_answer_null_cancels_the_question(agent_editor, fake_deepseek) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": f"ASK_USER|{QUESTION}"})
    questions = record_questions(client)

    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "Change the greeting"}))
    (question,) = await wait_until(lambda: questions)
    answered = await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": None})
    assert answered["answered"] is False
    with pytest.raises(Exception, match="cancelled"):
        await asyncio.wait_for(planning, 60)
    assert len([r for r in fake_deepseek.requests if r.role == "planner"]) == 1


async def test_answer_needs_a_question_id(agent_editor) -> None:
    client, _ = agent_editor
    with pytest.raises(Exception, match="question_id"):
        await run(client, names.CMD_ANSWER, {"answer": "x"})


async def test_a_client_that_declares_it_handles_questions_gets_no_fallback_message(declaring_editor, fake_deepseek) -> None:
    client = declaring_editor
    fake_deepseek.add({"match": {"role": "planner", "contains": "The user answered: formal"},
                       "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "planner"}, "content": f"ASK_USER|{QUESTION}"})
    questions = record_questions(client)

    planning = asyncio.ensure_future(run(client, names.CMD_PLAN, {"prompt": "Change the greeting"}))
    (question,) = await wait_until(lambda: questions)
    await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "formal"})
    planned = await asyncio.wait_for(planning, 60)
    assert [s["title"] for s in planned["plan"]["steps"]] == ["Make greet formal"]
    assert [m.message for m in client.messages if QUESTION in m.message] == []




async def plan_one_step(client, fake_deepseek) -> tuple[str, str]:
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    planned = await run(client, names.CMD_PLAN, {"prompt": "Change the greeting"})
    return planned["session_id"], planned["plan"]["steps"][0]["step_id"]


async def test_the_executor_asks_while_running_a_step(agent_editor, fake_deepseek) -> None:
    client, _ = agent_editor
    session_id, step_id = await plan_one_step(client, fake_deepseek)
    fake_deepseek.add({"match": {"role": "executor", "contains": "The user answered: keep it"}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "executor"}, "content": "ASK_USER|Keep the name add?"})
    questions = record_questions(client)

    running = asyncio.ensure_future(run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id}))
    (question,) = await wait_until(lambda: questions)
    assert question.question == "Keep the name add?" and question.session_id == session_id
    await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "keep it"})
    outcome = await asyncio.wait_for(running, 60)
    assert outcome["status"] == "staged" and len(outcome["patch_ids"]) == 1
    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    assert len(executor) == 2 and "The user answered: keep it" in planner_messages(executor[1])


async def test_cancel_while_a_step_waits_on_a_question(agent_editor, fake_deepseek) -> None:
    client, _ = agent_editor
    session_id, step_id = await plan_one_step(client, fake_deepseek)
    fake_deepseek.add({"match": {"role": "executor"}, "content": "ASK_USER|Keep the name add?"})
    questions = record_questions(client)

    running = asyncio.ensure_future(run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step_id}))
    (question,) = await wait_until(lambda: questions)
    assert (await run(client, names.CMD_CANCEL, {"session_id": session_id}))["cancelled"] is True
    with pytest.raises(Exception):
        await asyncio.wait_for(running, 60)
    assert (await client.protocol.send_request_async(names.REQ_PENDING_QUESTIONS, {})).questions == []
    with pytest.raises(Exception, match="No pending question"):
        await run(client, names.CMD_ANSWER, {"question_id": question.question_id, "answer": "late"})
    assert len([r for r in fake_deepseek.requests if r.role == "executor"]) == 1
    view = await client.protocol.send_request_async(names.REQ_PLAN, {"session_id": session_id})
    assert view.state == "Paused"  # resumable: the step can be run again
