"""`deepseek-ls acp` end to end with the ACP SDK's own client side, against the fake DeepSeek
server over HTTP: prompt -> plan -> diff shown -> permission -> file written through the client ->
verified; then the session is loaded in a new process and replayed with `deepseek-ls replay`.

That first test starts its own processes (it is about them); the others share one agent process,
each with its own client, workspace, session and an emptied fake."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from acp.exceptions import RequestError
from acp_kit import CLI, FS, RecordingClient, acp_agent, agent_env, fix_add_workspace, shared_session
from acp_kit import agent, fake_deepseek, shared_fake  # noqa: F401 - the shared agent's fixtures

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, diff, plan_json  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fix_add_workspace(tmp_path)


def _script(fake) -> None:
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor"}, "content": FIX})


async def test_prompt_plans_asks_permission_writes_through_the_client_and_resumes(fake_deepseek, workspace, tmp_path):
    _script(fake_deepseek)
    env = agent_env(fake_deepseek, tmp_path)
    client = RecordingClient("allow_once")
    async with acp_agent(client, workspace, env) as (conn, _):
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session
        assert init.agent_info.name == "deepseek-ls"
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert new.modes.current_mode_id == "agent"
        assert {m.id for m in new.modes.available_modes} >= {"plan", "agent", "yolo", "hetun"}  # hetun: never the default
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add so test_add passes")])
        assert answer.stop_reason == "end_turn"

    assert "return a + b" in (workspace / "app.py").read_text()
    assert [p for p, _ in client.writes] == [str(workspace / "app.py")], "the edit went through fs/write_text_file"
    assert str(workspace / "app.py") in client.reads, "files were read through fs/read_text_file"
    (call, options), = client.permissions
    assert call.kind == "edit" and call.content[0].type == "diff" and call.content[0].path == str(workspace / "app.py")
    assert "a - b" in call.content[0].old_text and "a + b" in call.content[0].new_text
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    kinds = client.kinds()
    assert "available_commands_update" in kinds and "plan" in kinds and "tool_call" in kinds
    plans = [u for u in client.updates if getattr(u, "session_update", None) == "plan"]
    assert plans[-1].entries[0].status == "completed" and "Fix add" in plans[-1].entries[0].content
    assert "Done: 1/1 step(s) applied and verified" in client.text("agent_message_chunk")
    # The context meter as ACP's usage_update: the latest prompt's tokens out of deepseek-v4-flash's window.
    usage = [u for u in client.updates if getattr(u, "session_update", None) == "usage_update"]
    assert usage and usage[-1].size == 1_000_000 and 0 < usage[-1].used < usage[-1].size
    assert "FIX" not in client.text("agent_message_chunk")  # raw diffs are not the answer
    thoughts = client.text("agent_thought_chunk")  # which model each step asked, and why it waited if it did
    assert "planner: asking deepseek" in thoughts and "executor: asking deepseek" in thoughts

    # Resume in a new process: session/load replays what happened.
    loaded = RecordingClient()
    async with acp_agent(loaded, workspace, env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        listed = await conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [new.session_id]
        assert listed.sessions[0].title.startswith("Fix add")
        await conn.load_session(cwd=str(workspace), session_id=new.session_id, mcp_servers=[])
    assert loaded.text("user_message_chunk").startswith("Fix add so test_add passes")
    assert "plan" in loaded.kinds() and "tool_call" in loaded.kinds()
    replayed_edit = [u for u in loaded.updates if getattr(u, "session_update", None) == "tool_call" and u.kind == "edit"]
    assert replayed_edit and "a + b" in replayed_edit[0].content[0].new_text

    # And `deepseek-ls replay` re-runs our session from its log.
    record = json.loads((workspace / ".deepseek" / "acp" / f"{new.session_id}.json").read_text())
    (ours,) = record["ours"]
    out = subprocess.run([CLI, "--workspace", str(workspace), "replay", ours, "--rerun"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


async def test_no_unapproved_exec_rejecting_permission_changes_nothing(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient("reject_once")
    async with shared_session(agent, client, workspace) as (conn, new):
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add")])
        assert answer.stop_reason == "end_turn"
    assert "a - b" in (workspace / "app.py").read_text() and client.writes == []
    assert "[Paused]" in client.text("agent_message_chunk")


async def test_plan_mode_only_plans(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient()
    async with shared_session(agent, client, workspace) as (conn, new):
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add")])
        assert answer.stop_reason == "end_turn"
    assert "a - b" in (workspace / "app.py").read_text() and client.permissions == []
    assert any(getattr(u, "session_update", None) == "current_mode_update" for u in client.updates)
    assert "Plan ready (1 steps)" in client.text("agent_message_chunk")


async def test_cancel_mid_turn_answers_cancelled_and_pauses(agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"])),
                       "chunk_delay": 0.2, "chunk_chars": 4})
    client = RecordingClient()
    async with shared_session(agent, client, workspace) as (conn, new):
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add")]))
        while not client.updates or not any(getattr(u, "session_update", "") == "agent_thought_chunk" for u in client.updates):
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=new.session_id)
        answer = await asyncio.wait_for(turn, 60)
        assert answer.stop_reason == "cancelled"
    record = json.loads((workspace / ".deepseek" / "acp" / f"{new.session_id}.json").read_text())
    states = [json.loads(line) for line in (workspace / ".deepseek" / "sessions" / record["ours"][0] / "events.jsonl").read_text().splitlines()]
    assert [e["payload"]["to_state"] for e in states if e["kind"] == "SessionStateChanged@v1"][-1] == "Paused"


@pytest.mark.parametrize(
    ("call", "code"),
    [
        pytest.param(lambda c, s: c.prompt(session_id="not-a-session", prompt=[text_block("x")]), -32602, id="unknown-session"),
        pytest.param(lambda c, s: c.set_session_mode(session_id=s, mode_id="bogus"), -32602, id="unknown-mode"),
        pytest.param(lambda c, s: c.prompt(session_id=s, prompt=[]), -32602, id="empty-prompt"),
        pytest.param(lambda c, s: c.load_session(cwd="/", session_id="../../etc/passwd", mcp_servers=[]), -32602, id="load-path-id"),
        pytest.param(lambda c, s: c.new_session(cwd="relative/dir", mcp_servers=[]), -32602, id="relative-cwd"),
        pytest.param(lambda c, s: c.ext_method("deepseek/nothing", {}), -32601, id="unknown-method"),
    ],
)
async def test_always_answers_bad_calls_with_errors(agent, fake_deepseek, workspace, call, code):
    client = RecordingClient()
    async with shared_session(agent, client, workspace) as (conn, new):
        with pytest.raises(RequestError) as err:
            await asyncio.wait_for(call(conn, new.session_id), 30)
        assert err.value.code == code
        # Still serving afterwards.
        assert (await conn.list_sessions(cwd=str(workspace))).sessions


async def _applied_then(agent, client: RecordingClient, workspace: Path, between, prompt: str = "/undo") -> str:
    """Run the fix through the client, let `between()` play the person, then send `prompt`; the answer's text."""
    async with shared_session(agent, client, workspace) as (conn, new):
        assert (await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add")])).stop_reason == "end_turn"
        assert "return a + b" in (workspace / "app.py").read_text()
        between()
        before = len(client.updates)
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block(prompt)])
        assert answer.stop_reason == "end_turn"
    return "".join(u.content.text for u in client.updates[before:]
                   if getattr(u, "session_update", None) == "agent_message_chunk")


async def test_undo_command_takes_the_apply_back_through_the_client(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient("allow_once")
    said = await _applied_then(agent, client, workspace, lambda: None)
    assert (workspace / "app.py").read_text() == APP
    assert [p for p, _ in client.writes] == [str(workspace / "app.py")] * 2, "the undo went through fs/write_text_file"
    assert "Undid the latest apply (app.py)" in said
    commands = [u for u in client.updates if getattr(u, "session_update", None) == "available_commands_update"]
    assert "undo" in {c.name for c in commands[-1].available_commands}


async def test_never_clobber_undo_keeps_what_was_typed_since(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient("allow_once")
    app = workspace / "app.py"
    said = await _applied_then(agent, client, workspace,
                               lambda: app.write_text("# typed after the apply\n" + app.read_text()))
    assert app.read_text() == "# typed after the apply\n" + APP
    assert "Edits made since were kept in app.py" in said


async def test_never_clobber_undo_refuses_over_an_edit_of_the_same_lines(agent, fake_deepseek, workspace):
    _script(fake_deepseek)
    client = RecordingClient("allow_once")
    app = workspace / "app.py"
    said = await _applied_then(agent, client, workspace,
                               lambda: app.write_text(app.read_text().replace("a + b", "a + b  # mine")))
    assert "a + b  # mine" in app.read_text(), "the person's edit stays"
    assert "[undo refused]" in said and len(client.writes) == 1


async def test_undo_with_nothing_applied_says_so(agent, fake_deepseek, workspace):
    client = RecordingClient()
    async with shared_session(agent, client, workspace) as (conn, new):
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("/undo")])
        assert answer.stop_reason == "end_turn"
        compacted = await conn.prompt(session_id=new.session_id, prompt=[text_block("/compact the tests")])
        assert compacted.stop_reason == "end_turn"
    assert "Nothing to undo" in client.text("agent_message_chunk") and client.writes == []
    assert "Nothing to compact" in client.text("agent_message_chunk") and fake_deepseek.requests == []
    assert (workspace / "app.py").read_text() == APP
