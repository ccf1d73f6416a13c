"""Every "no" over ACP ends the turn in a defined state: `session/request_permission` answered
`reject_once`, `cancelled`, or never, at each approval point an ACP client sees (the edit, the
verification command, an acting MCP tool, the Hetun mission card).

One `deepseek-ls acp` process (the SDK's own client side driving it) serves every case, each in its
own ACP session and workspace; the person's "never" ends after `policy.approval_timeout_seconds`
(1 s here). A `cancelled` outcome ends the turn with stop reason `cancelled` and is never recorded as
a rejection (on the old code it was a deny: the change recorded rejected, the turn `end_turn`); a
reject ends it `end_turn`; no answer pauses the session instead of waiting for ever.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    McpServerStdio,
    RequestPermissionResponse,
)
from acp_kit import FS, RecordingClient, acp_agent, agent_env, fix_add_workspace

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import diff, plan_json

pytestmark = pytest.mark.asyncio(loop_scope="module")

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
HOSTILE_MCP = Path(__file__).resolve().parents[1] / "mcp" / "hostile_mcp_server.py"
ANSWERS = [pytest.param("reject_once", id="reject"), pytest.param("cancelled", id="cancelled"),
           pytest.param("never", id="no-answer")]
STOP = {"reject_once": "end_turn", "cancelled": "cancelled", "never": "end_turn"}
OURS = {"reject_once": "deny", "cancelled": "cancel", "never": "timeout"}
MAX_EVENTS = 80


class Person(RecordingClient):
    """Answers each permission by its tool call's kind (`edit`, `execute`, `other`, `think`): an
    option id, `cancelled`, or `never` (no answer); what is not listed is allowed once."""

    def __init__(self) -> None:
        super().__init__()
        self.by_kind: dict[str, str] = {}
        self.asked: dict[str, Counter[str]] = {}
        self.never = asyncio.Event()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        kind = tool_call.kind or "other"
        self.asked.setdefault(session_id, Counter())[kind] += 1
        answer = self.by_kind.get(kind, "allow_once" if kind != "think" else "0")
        if answer == "never":
            await self.never.wait()
            answer = "cancelled"
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))


@dataclass
class Acp:
    conn: Any
    client: Person
    fake: FakeDeepSeek
    tmp: Path

    def workspace(self) -> Path:
        return fix_add_workspace(self.tmp, uuid.uuid4().hex[:8])

    async def turn(self, root: Path, text: str, *, mode: str | None = None, mcp: list[Any] | None = None):
        """A new ACP session in `root`, one prompt; (its stop reason, its session id, our session's events)."""
        new = await self.conn.new_session(cwd=str(root), mcp_servers=mcp or [])
        if mode:
            await self.conn.set_session_mode(session_id=new.session_id, mode_id=mode)
        answer = await asyncio.wait_for(self.conn.prompt(session_id=new.session_id, prompt=[text_block(text)]), 120)
        record = json.loads((root / ".deepseek" / "acp" / f"{new.session_id}.json").read_text())
        (ours,) = record["ours"]
        log = root / ".deepseek" / "sessions" / ours / "events.jsonl"
        return answer.stop_reason, new.session_id, [json.loads(line) for line in log.read_text().splitlines()]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def acp(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("acp-refusals")
    fake = FakeDeepSeek().start()
    env = {**agent_env(fake, tmp), "DEEPSEEK_LS_POLICY__APPROVAL_TIMEOUT_SECONDS": "1"}
    client = Person()
    first = tmp / "first"
    first.mkdir()
    try:
        async with acp_agent(client, first, env) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
            yield Acp(conn, client, fake, tmp)
            client.never.set()
    finally:
        fake.stop()


def last_state(events: list[dict]) -> dict:
    return [e["payload"] for e in events if e["kind"] == "SessionStateChanged@v1"][-1]


def refused_here(events: list[dict], kind: str, answer: str) -> str:
    """Our session stopped Paused on this refusal, in few events; returns its reason."""
    state = last_state(events)
    assert state["to_state"] == "Paused", state
    assert state["refusal"]["kind"] == kind and state["refusal"]["answer"] == OURS[answer], state
    assert len(events) < MAX_EVENTS
    return state["reason"]


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_acp_edit_permission_refused(acp: Acp, answer: str) -> None:
    tag = uuid.uuid4().hex[:6]
    acp.fake.add({"match": {"role": "planner", "contains": tag},
                  "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    acp.fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}"}, "content": FIX})
    acp.client.by_kind = {"edit": answer}
    root = acp.workspace()
    stop, sid, events = await acp.turn(root, f"Fix add {tag}")

    assert stop == STOP[answer]
    refused_here(events, "patch.apply", answer)
    assert acp.client.asked[sid] == Counter({"edit": 1})
    assert "a - b" in (root / "app.py").read_text() and not any(p.startswith(str(root)) for p, _ in acp.client.writes)
    rejected = [e for e in events if e["kind"] == "PatchRejected@v1"]
    assert bool(rejected) is (answer == "reject_once")  # a cancel or no answer is not a rejection


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_acp_verification_permission_refused(acp: Acp, answer: str) -> None:
    tag = uuid.uuid4().hex[:6]
    root = acp.workspace()
    marker = root / f"ran-{tag}"  # in the workspace (bound writable): were it run, the host would see it
    (root / "Makefile").write_text(f"test:\n\ttouch {marker}\n")
    acp.fake.add({"match": {"role": "planner", "contains": tag},
                  "content": plan_json((f"Check add {tag}", ["app.py"]), verification=["make test X=1"])})
    acp.fake.add({"match": {"role": "executor", "contains": f"Check add {tag}"}, "content": "NO_CHANGE|fine as it is"})
    acp.client.by_kind = {"execute": answer}
    try:
        stop, sid, events = await acp.turn(root, f"Check add {tag}")
        assert stop == STOP[answer]
        assert "was not run" in refused_here(events, "bash.run", answer)
        assert acp.client.asked[sid] == Counter({"execute": 1})
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_acp_mcp_permission_refused(acp: Acp, answer: str) -> None:
    tag = uuid.uuid4().hex[:6]
    root = acp.workspace()
    state = root.parent / f"mcp-{tag}"
    server = McpServerStdio(name="srv", command=sys.executable, args=[str(HOSTILE_MCP), "acting", str(state)], env=[])
    call = {"name": "mcp_srv_lookup", "arguments": {"q": tag}}
    acp.fake.add({"match": {"role": "planner", "contains": tag},
                  "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    acp.fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}", "last_role": "user"}, "tool_calls": [call]})
    acp.fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}", "last_role": "tool"}, "content": FIX})
    acp.client.by_kind = {"other": answer}
    stop, sid, events = await acp.turn(root, f"Fix add {tag}", mcp=[server])

    assert stop == STOP[answer]
    assert acp.client.asked[sid]["other"] == 1
    assert not (state / "calls.jsonl").exists()
    if answer == "reject_once":  # the model is told and finishes the step without the tool
        assert last_state(events)["to_state"] == "Completed"
        assert "return a + b" in (root / "app.py").read_text()
    else:
        assert "mcp_srv_lookup" in refused_here(events, "mcp.call", answer)
        assert "a - b" in (root / "app.py").read_text()


@pytest.mark.parametrize("answer", [pytest.param("1", id="reject"), *ANSWERS[1:]])
async def test_never_hang_acp_mission_card_refused(acp: Acp, answer: str) -> None:
    tag = uuid.uuid4().hex[:6]
    acp.fake.add({"match": {"role": "hetun.coordinator", "contains": tag}, "content": "SLICE|app.py\n"})
    acp.fake.add({"match": {"role": "hetun.sub", "contains": "app.py"}, "content": "FINDING|0.9|add returns a - b\n"})
    acp.fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"})
    acp.fake.add({"match": {"role": "planner", "contains": tag},
                  "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    acp.client.by_kind = {"think": answer}
    root = acp.workspace()
    stop, sid, events = await acp.turn(root, f"Fix add {tag}", mode="hetun")

    assert stop == STOP.get(answer, "end_turn")
    assert acp.client.asked[sid] == Counter({"think": 1})
    if answer == "1":
        assert "mission rejected" in last_state(events)["reason"]
    else:
        assert "still waits" in refused_here(events, "mission", answer if answer != "never" else "never")
    assert not any(e["kind"] in ("MissionCheckpoint@v1", "PatchStaged@v1") for e in events)
    assert "a - b" in (root / "app.py").read_text()
