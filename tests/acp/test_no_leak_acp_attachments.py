"""Never leak through ACP: keys in what the client attaches (an embedded resource of an ordinary
file) and in the prompt's text reach neither the model nor `events.jsonl`. The keys are ones the
old, detector-by-detector redaction left half unmasked (an OpenAI project key whose window
detect-secrets masked first, a Stripe key longer than 24 characters) and a SendGrid key."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import EmbeddedResourceContentBlock, TextResourceContents
from acp_kit import FS, RecordingClient, acp_agent, agent_env

from deepseek_ls.testkit.secret_shapes import pieces

OPENAI = ("sk-proj-" + "A1b2C3d4E5" * 7 + "F6g7" + "T3BlbkFJ" + "H8i9J0k1L2" * 2 + "-" + "m3N4o5P6q7" * 5 + "R8s")
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "Zq8Lm3Np7Rt2Vx6Bw1Ky5Hj9Df4Gs0Ac"
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
KEYS = (OPENAI, STRIPE, SENDGRID)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


async def test_no_leak_keys_in_an_acp_attachment_or_prompt(fake_deepseek, workspace, tmp_path) -> None:
    fake_deepseek.add({"match": {"role": "ask"}, "content": "They are settings.", "repeat": True})
    settings = "".join(f"KEY_{i} = '{key}'\n" for i, key in enumerate(KEYS))
    prompt = [
        text_block(f"Why does {OPENAI} fail? My Stripe key is {STRIPE} and SendGrid's {SENDGRID}."),
        EmbeddedResourceContentBlock(type="resource", resource=TextResourceContents(
            uri=f"file://{workspace}/config/settings.py", text=settings)),
    ]
    client = RecordingClient()
    async with acp_agent(client, workspace, agent_env(fake_deepseek, tmp_path)) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await conn.set_session_mode(session_id=sid, mode_id="ask")
        answer = await conn.prompt(session_id=sid, prompt=prompt)
    assert answer.stop_reason == "end_turn" and "They are settings." in client.text("agent_message_chunk")
    sent = "\n".join(json.dumps(r.body) for r in fake_deepseek.requests)
    logged = "".join(p.read_text() for p in (workspace / ".deepseek").rglob("events.jsonl"))
    assert "config/settings.py" in sent and sent.count("[REDACTED:") >= 2 * len(KEYS)  # both went, masked
    seen = pieces(sent) | pieces(logged)
    leaked = {key[:12]: sorted(pieces(key) & seen)[:3] for key in KEYS if pieces(key) & seen}
    assert leaked == {}
