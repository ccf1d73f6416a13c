"""`/rewind` in `deepseek-ls acp`, driven by the ACP SDK's own client side against the fake DeepSeek
server: the conversation's prompts listed, the rewind asked as a permission ("Cancel" and a cancelled
question rewind nothing), the code taken back through the client's files keeping what was typed
since, the prompt out of the conversation's record, `/rewind redo` putting both back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from acp_kit import FS, RecordingClient, acp_agent, agent_env, fix_add_workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, diff, plan_json  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
TYPED = "# typed after the apply\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fix_add_workspace(tmp_path)


async def test_never_clobber_acp_rewind_asks_keeps_typing_and_redoes(fake_deepseek, workspace, tmp_path):
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    client = RecordingClient("allow_once")
    app = workspace / "app.py"
    async with acp_agent(client, workspace, agent_env(fake_deepseek, tmp_path)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])

        async def say(text: str, stop: str = "end_turn") -> str:
            before = len(client.updates)
            assert (await conn.prompt(session_id=new.session_id, prompt=[text_block(text)])).stop_reason == stop
            return "".join(u.content.text for u in client.updates[before:]
                           if getattr(u, "session_update", None) == "agent_message_chunk")

        await say("Fix add")
        app.write_text(TYPED + app.read_text())  # the person types after the apply
        assert "1. Fix add — changed app.py" in await say("/rewind")
        for answer, stop in (("no", "end_turn"), (None, "cancelled")):  # Cancel, and a cancelled question
            client.answer = answer
            assert "Not rewound: nothing was changed." in await say("/rewind 1", stop)
        assert app.read_text() == TYPED + APP.replace("a - b", "a + b")
        client.answer = "yes"
        said = await say("/rewind 1")
        assert "Rewound both: app.py" in said, said
        assert app.read_text() == TYPED + APP  # the fix gone, the typing kept
        assert client.writes[-1] == (str(app), TYPED + APP)  # through the client's files
        record = json.loads((workspace / ".deepseek" / "acp" / f"{new.session_id}.json").read_text())
        assert record["ours"] == [] and len(record["rewound"]) == 1
        assert "Rewind redone: app.py." in await say("/rewind redo")
        assert app.read_text() == TYPED + APP.replace("a - b", "a + b")
        record = json.loads((workspace / ".deepseek" / "acp" / f"{new.session_id}.json").read_text())
        assert len(record["ours"]) == 1 and record["rewound"] == {}
