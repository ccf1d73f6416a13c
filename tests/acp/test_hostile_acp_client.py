"""A hostile ACP client driving a real `deepseek-ls acp` process (the SDK's client side, answering
the way no editor should): permission answers we never offered, errors and silence instead of
answers, file reads and writes that fail or lie, prompts on top of prompts, cancels of nothing,
and a client that leaves mid-turn. Every prompt is still answered, nothing unapproved is written,
and the workspace's files and event logs stay whole.

One agent process serves the file's tests (each its own client, workspace and session, and a reset
fake): start-up was most of each test's time. A client that leaves, and the 10 MB inputs, get a
process of their own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp import PROTOCOL_VERSION, text_block
from acp.exceptions import RequestError
from acp.schema import AllowedOutcome, ReadTextFileResponse, RequestPermissionResponse
from acp_kit import FS, RecordingClient, acp_agent, agent_env, events_of, fix_add_workspace, shared_session
from acp_kit import agent, fake_deepseek, shared_fake  # noqa: F401 - the shared agent's fixtures

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, diff, plan_json  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fix_add_workspace(tmp_path)


@contextlib.asynccontextmanager
async def _session(agent, client: RecordingClient, workspace: Path, mode: str | None = None):
    """A session of the shared agent in this test's workspace: the connection and its id."""
    async with shared_session(agent, client, workspace, mode) as (conn, new):
        yield conn, new.session_id


def _script(fake) -> None:
    fake.add({"match": {"role": "planner"}, "content": PLAN})
    fake.add({"match": {"role": "executor"}, "content": FIX})


def _last_state(workspace: Path) -> str:
    return [e["payload"]["to_state"] for e in events_of(workspace) if e["kind"] == "SessionStateChanged@v1"][-1]


async def _open(conn, workspace: Path, mode: str | None = None) -> str:
    await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
    new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    if mode:
        await conn.set_session_mode(session_id=new.session_id, mode_id=mode)
    return new.session_id


# -- permission answers ------------------------------------------------------------------------


class OddAnswers(RecordingClient):
    """Answers every permission request with `pick` (an option id, maybe one we never offered), or
    with a JSON-RPC error when `pick` is an exception."""

    def __init__(self, pick: Any) -> None:
        super().__init__()
        self.pick = pick

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        self.permissions.append((tool_call, options))
        if isinstance(self.pick, Exception):
            raise self.pick
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.pick))


@pytest.mark.parametrize(
    "pick",
    [
        pytest.param("allow", id="option-never-offered"),
        pytest.param("ALLOW_ONCE", id="offered-id-in-other-case"),
        pytest.param("0", id="a-mission-choice-index-for-an-edit"),
        pytest.param("allow_once ", id="offered-id-with-a-space"),
        pytest.param(RequestError.internal_error({"details": "editor crashed"}), id="error-instead-of-an-answer"),
    ],
)
async def test_no_unapproved_exec_an_answer_we_never_offered_writes_nothing(agent, fake_deepseek, workspace, pick):
    _script(fake_deepseek)
    client = OddAnswers(pick)
    async with _session(agent, client, workspace) as (conn, sid):
        answer = await conn.prompt(session_id=sid, prompt=[text_block("Fix add")])
        assert answer.stop_reason == "end_turn"
    assert client.permissions, "the edit was never put to the client"
    assert "a - b" in (workspace / "app.py").read_text() and client.writes == []
    assert _last_state(workspace) == "Paused"


def _hetun_replies(fake) -> None:
    for reply in [
        {"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\n"},
        {"match": {"role": "hetun.sub"}, "repeat": True, "content": "FINDING|0.9|app.py:6 add returns a - b\n"},
        {"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"},
        {"match": {"role": "planner"}, "content": PLAN},
        {"match": {"role": "executor"}, "content": FIX},
    ]:
        fake.add(reply)


@pytest.mark.parametrize(
    "pick",
    [
        pytest.param("99", id="choice-out-of-range"),
        pytest.param("allow_once", id="an-approval-option-for-a-question"),
        pytest.param("-1", id="negative-choice"),
    ],
)
async def test_always_answers_a_mission_question_answered_with_a_choice_never_offered(agent, fake_deepseek, workspace,
                                                                                    pick):
    """Hetun's mission card is a question with choices (approve / modify / reject) asked as a permission
    request; an option id outside them is no answer: nothing runs, the turn ends normally."""
    _hetun_replies(fake_deepseek)
    client = OddAnswers(pick)
    async with _session(agent, client, workspace, mode="hetun") as (conn, sid):
        answer = await conn.prompt(session_id=sid, prompt=[text_block("Fix add in app.py")])
        assert answer.stop_reason == "end_turn"
        # Still serving the session.
        assert (await conn.list_sessions(cwd=str(workspace))).sessions
    assert client.permissions, "the mission was never put to the client"
    said = client.text("agent_message_chunk")
    assert "Error" not in said and "[stopped]" not in said, said[-500:]
    assert "a - b" in (workspace / "app.py").read_text() and client.writes == []


async def test_always_answers_cancel_while_the_client_never_answers_permission(agent, fake_deepseek, workspace):
    """The client sits on the permission request; a cancel still ends the turn (as cancelled), and
    the answer that finally arrives afterwards applies nothing."""
    _script(fake_deepseek)
    client = RecordingClient("allow_once")
    client.hold_permission = asyncio.Event()
    async with _session(agent, client, workspace) as (conn, sid):
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("Fix add")]))
        await asyncio.wait_for(client.permission_asked.wait(), 120)
        await conn.cancel(session_id=sid)
        await conn.cancel(session_id=sid)  # twice
        assert (await asyncio.wait_for(turn, 120)).stop_reason == "cancelled"
        client.hold_permission.set()  # the late "allow"
        await conn.cancel(session_id=sid)  # cancel of nothing
        await conn.cancel(session_id="no-such-session")
        assert (await conn.list_sessions(cwd=str(workspace))).sessions
    assert "a - b" in (workspace / "app.py").read_text() and client.writes == []
    assert _last_state(workspace) == "Paused"


async def test_always_answers_a_second_prompt_while_one_runs(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient("allow_once")
    client.hold_permission = asyncio.Event()
    async with _session(agent, client, workspace) as (conn, sid):
        first = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("Fix add")]))
        await asyncio.wait_for(client.permission_asked.wait(), 120)
        with pytest.raises(RequestError) as err:
            await conn.prompt(session_id=sid, prompt=[text_block("and also this")])
        assert err.value.code == -32600
        client.hold_permission.set()
        assert (await asyncio.wait_for(first, 120)).stop_reason == "end_turn"
    assert "return a + b" in (workspace / "app.py").read_text()


# -- file access through the client ------------------------------------------------------------


class LyingFiles(RecordingClient):
    """fs/read_text_file and fs/write_text_file that fail or answer nonsense, per `how`."""

    def __init__(self, how: str) -> None:
        super().__init__("allow_once")
        self.how = how

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any):
        self.reads.append(path)
        if self.how == "read-error":
            raise RequestError.internal_error({"details": "no such buffer"})
        if self.how == "read-wrong-type":
            return {"content": 12345}
        if self.how == "read-no-content":
            return {}
        return await super().read_text_file(session_id, path, line, limit, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        if self.how == "write-error":
            self.writes.append((path, "refused"))
            raise RequestError.internal_error({"details": "the buffer is read-only"})
        return await super().write_text_file(session_id, path, content, **kwargs)


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("read-error", id="read-answers-an-error"),
        pytest.param("read-wrong-type", id="read-answers-a-number"),
        pytest.param("read-no-content", id="read-answers-nothing"),
    ],
)
async def test_always_answers_file_reads_that_fail(agent, fake_deepseek, workspace, how):
    """A failed or malformed client read is never replaced by the disk (which may not be what the
    person sees): the prompt answers a JSON-RPC error naming the file, nothing is written, and the
    session still serves."""
    _script(fake_deepseek)
    client = LyingFiles(how)
    async with _session(agent, client, workspace) as (conn, sid):
        with pytest.raises(RequestError) as err:
            await conn.prompt(session_id=sid, prompt=[text_block("Fix add")])
        assert err.value.code == -32603 and "app.py" in str(err.value) and "fs/read_text_file" in str(err.value)
        assert (await conn.list_sessions(cwd=str(workspace))).sessions
    assert client.reads and client.writes == []
    assert (workspace / "app.py").read_text() == APP
    events_of(workspace)  # every log line still parses


async def test_no_silent_write_a_write_that_fails_is_a_refused_change(agent, fake_deepseek, workspace):
    """A client write that answers an error is never written to the disk instead: the change is
    refused (recorded rejected), the turn says so and ends, the session is Paused."""
    _script(fake_deepseek)
    client = LyingFiles("write-error")
    async with _session(agent, client, workspace) as (conn, sid):
        answer = await conn.prompt(session_id=sid, prompt=[text_block("Fix add")])
        assert answer.stop_reason == "end_turn"
    assert client.writes == [(str(workspace / "app.py"), "refused")]
    assert (workspace / "app.py").read_text() == APP
    said = client.text("agent_message_chunk")
    assert "the buffer is read-only" in said and "nothing was written" in said and "Done" not in said, said
    assert _last_state(workspace) == "Paused"


# -- the client leaves -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "moment",
    [
        pytest.param("permission", id="while-permission-is-asked"),
        pytest.param("streaming", id="while-the-model-streams"),
    ],
)
async def test_never_clobber_a_client_that_disconnects_mid_turn(fake_deepseek, workspace, tmp_path, moment):
    """The client closes the pipe mid-turn: the agent ends the turn (Paused, resumable), exits, and
    leaves app.py and every event log whole."""
    if moment == "streaming":
        fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, "chunk_delay": 0.2, "chunk_chars": 4})
        fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    else:
        _script(fake_deepseek)
    client = RecordingClient("allow_once")
    client.hold_permission = asyncio.Event()
    async with acp_agent(client, workspace, agent_env(fake_deepseek, tmp_path)) as (conn, proc):
        sid = await _open(conn, workspace)
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("Fix add")]))
        if moment == "permission":
            await asyncio.wait_for(client.permission_asked.wait(), 120)
        else:
            while not any(getattr(u, "session_update", "") == "agent_thought_chunk" for u in client.updates):
                await asyncio.sleep(0.05)
        proc.stdin.close()  # the editor is gone
        assert await asyncio.wait_for(proc.wait(), 120) == 0
        turn.cancel()
    assert (workspace / "app.py").read_text() == APP
    assert _last_state(workspace) == "Paused"
    record = json.loads((workspace / ".deepseek" / "acp" / f"{sid}.json").read_text())
    assert record["ours"], "the ACP session lost track of the turn's session"


# -- what the client attaches ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        pytest.param("file://{ws}/.env", "DB_PASSWORD=hunter2hunter2\n", id="dotenv-in-the-workspace"),
        pytest.param("file:///home/someone/.aws/credentials", "[default]\nregion = hunter2hunter2\n",
                     id="aws-credentials-outside"),
        pytest.param("file://{ws}/config/.env.production", "TOKEN=hunter2hunter2\n", id="dotenv-below"),
        pytest.param("file://{ws}/notes.txt", "machine example.com\nlogin me\npassword hunter2hunter2\n",
                     id="netrc-content-under-an-innocent-name"),
        pytest.param("file://{ws}/%2Eenv", "DB_PASSWORD=hunter2hunter2\n", id="percent-encoded-name"),
    ],
)
async def test_no_leak_a_secret_file_the_client_attaches(agent, fake_deepseek, workspace, uri, text):
    """An embedded resource is refused as our own file tools refuse it (by location or by content); the
    rest of the prompt still goes, and the chat says what was left out."""
    from acp.schema import EmbeddedResourceContentBlock, TextResourceContents

    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds.", "repeat": True})
    uri = uri.format(ws=workspace)
    client = RecordingClient()
    attached = [
        text_block("What does add do?"),
        EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(uri=uri, text=text)),
        EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
            uri=f"file://{workspace}/app.py", text=APP)),
    ]
    async with _session(agent, client, workspace, mode="ask") as (conn, sid):
        answer = await conn.prompt(session_id=sid, prompt=attached)
        assert answer.stop_reason == "end_turn"
    sent = "\n".join(json.dumps(r.body) for r in fake_deepseek.requests)
    assert fake_deepseek.requests and "hunter2hunter2" not in sent
    assert "def add" in sent, "the harmless attachment was dropped too"
    said = client.text("agent_message_chunk")
    assert "left out of the prompt" in said and uri in said and "It adds." in said
    assert "hunter2hunter2" not in json.dumps([_ for _ in events_of(workspace)])


class HugeReads(RecordingClient):
    """fs/read_text_file answers 10 MB for any file (not what is on disk)."""

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any):
        self.reads.append(path)
        return ReadTextFileResponse(content="# padding\n" * 1_000_000)


@pytest.mark.parametrize(
    ("size", "client_cls"),
    [
        pytest.param(10 * 1024 * 1024, RecordingClient, id="prompt-of-10-MB"),
        pytest.param(1000, HugeReads, id="buffer-of-10-MB"),
    ],
)
async def test_always_answers_huge_prompts_and_buffers(fake_deepseek, workspace, tmp_path, size, client_cls):
    """A 10 MB prompt, or a client whose buffers are 10 MB each: the prompt is answered (or, when it
    does not fit the model, refused with a JSON-RPC error saying why) and the agent still serves the
    session afterwards."""
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds.", "repeat": True})
    client = client_cls()
    async with acp_agent(client, workspace, agent_env(fake_deepseek, tmp_path)) as (conn, proc):
        sid = await _open(conn, workspace, mode="ask")
        try:
            answer = await conn.prompt(session_id=sid, prompt=[text_block("What does add do? " + "x" * size)])
            assert answer.stop_reason == "end_turn"
        except RequestError as err:
            assert err.code == -32603 and "context window" in str(err), err
        again = await conn.prompt(session_id=sid, prompt=[text_block("And sub?")])
        assert again.stop_reason == "end_turn" and proc.returncode is None
    assert "It adds." in client.text("agent_message_chunk")
    events_of(workspace)
    assert (workspace / "app.py").read_text() == APP
