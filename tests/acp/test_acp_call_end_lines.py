"""An ACP client sees how each model call ended, as it sees how it started: "planner: asking M"
is followed by "planner: done (1.2s, 40 tokens)", "failed (...)" or "cancelled (...)" as a thought."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from acp.exceptions import RequestError
from acp_kit import FS, RecordingClient, acp_agent, agent_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import plan_json  # noqa: E402

# "planner: done (0.3s, 12 tokens)": the outcome, the seconds since its first line, the chunks streamed.
END = r"planner: {outcome} \((\d+\.\d)s(?:, (\d+) tokens)?\)\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    return root


async def _turn(fake, workspace: Path, tmp_path: Path, *, cancel: bool = False, fails: bool = False) -> str:
    client = RecordingClient()
    async with acp_agent(client, workspace, agent_env(fake, tmp_path)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        turn = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("Plan a change")]))
        if cancel:
            while "planner: asking" not in client.text("agent_thought_chunk"):
                await asyncio.sleep(0.05)
            await conn.cancel(session_id=new.session_id)
        if fails:  # a failed turn is a JSON-RPC error; what was said before it still arrived
            with pytest.raises(RequestError):
                await asyncio.wait_for(turn, 60)
        else:
            await asyncio.wait_for(turn, 60)
    return client.text("agent_thought_chunk")


async def test_a_call_that_answered_ends_with_done_time_and_tokens(fake_deepseek, workspace, tmp_path):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Change x", ["app.py"])), "chunk_chars": 8})
    thoughts = await _turn(fake_deepseek, workspace, tmp_path)
    end = re.search(END.format(outcome="done"), thoughts)
    assert end is not None, thoughts
    assert thoughts.index("planner: asking deepseek") < end.start()
    assert end.group(2) is not None and int(end.group(2)) > 0, "the chunks streamed while it ran are counted"


async def test_a_call_that_failed_ends_with_failed(fake_deepseek, workspace, tmp_path):
    fake_deepseek.add({"match": {"role": "planner"}, "fault": {"status": 400}})
    thoughts = await _turn(fake_deepseek, workspace, tmp_path, fails=True)
    assert re.search(END.format(outcome="failed"), thoughts), thoughts
    assert "planner: done" not in thoughts


async def test_a_cancelled_call_ends_with_cancelled(fake_deepseek, workspace, tmp_path):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Change x", ["app.py"])),
                       "chunk_delay": 0.3, "chunk_chars": 4})
    thoughts = await _turn(fake_deepseek, workspace, tmp_path, cancel=True)
    assert re.search(END.format(outcome="cancelled"), thoughts), thoughts
