"""Every "no" in the editor ends in a defined state: each approval point the language server puts
to the person — a verification command, an acting MCP tool (both `window/showMessageRequest` while
a step runs), a bulk accept of a gated patch (`acceptFile`, `acceptAll`), a clarifying question
(`deepseek/question`) — answered with the "Deny" item, dismissed (`null`), not answered within
`policy.approval_timeout_seconds` (1 s here), or denied with the `deepseek.deny` command.

One real server (pytest-lsp, Neovim's capabilities) and one fake DeepSeek serve every case. Each
checks the session's state and reason, that the person was asked once, that nothing was applied
or run, and that the log stayed small. On the old code a dismissed message was a deny (a gated
patch's message said "approval denied" whatever happened), a message nobody answered left the
step waiting for ever, and a cancelled question sent the session back to Idle.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import (
    ADD_FIX,
    APP,
    CFG_DIFF,
    CFG_ORIGINAL,
    EditorState,
    file_uri,
    run,
    script_message_answers,
    start_client,
    wait_until,
)
from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.policy import PathPolicy
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.workspace import state_dir

pytestmark = pytest.mark.asyncio(loop_scope="module")

HOSTILE_MCP = Path(__file__).resolve().parents[1] / "mcp" / "hostile_mcp_server.py"
# How the editor answers the approval's message: the "Deny" item, dismissed, never, or the command.
ANSWERS = [pytest.param("Deny", id="deny-item"), pytest.param(None, id="dismissed"),
           pytest.param("never", id="no-answer"), pytest.param("command", id="deepseek-deny")]
OURS = {"Deny": "deny", None: "cancel", "never": "timeout", "command": "deny"}
SAID = {"deny": "denied", "cancel": "cancelled", "timeout": "no answer within 1 s"}
MAX_EVENTS = 80


@dataclass
class Lsp:
    client: Any
    state: EditorState
    root: Path
    fake: FakeDeepSeek
    store: PatchStore
    answer: str | None = "Deny"
    asked: list[types.ShowMessageRequestParams] = field(default_factory=list)
    questions: list[Any] = field(default_factory=list)  # `deepseek/question` notifications

    def events(self, session_id: str) -> list[dict]:
        log = self.root / ".deepseek" / "sessions" / session_id / "events.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()]

    async def answered(self, work: Any) -> Any:
        """Run `work` (a command) while the person answers as `answer` says; `command` answers with
        `deepseek.deny` once the message is up (the message itself is never answered)."""
        task = asyncio.ensure_future(work)
        if self.answer == "command":
            await wait_until(lambda: self.asked or task.done())
            listed = await self.client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})
            (pending,) = listed.approvals
            denied = await run(self.client, names.CMD_DENY, {"request_id": pending.request_id, "reason": "not now"})
            assert denied == {"request_id": pending.request_id, "answer": "deny"}
        return await asyncio.wait_for(task, 120)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lsp(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("lsp-refusals")
    root = tmp / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True)
    xdg = tmp / "xdg-config"
    (xdg / "deepseek-ls").mkdir(parents=True)
    (xdg / "deepseek-ls" / "config.toml").write_text(  # the person's own MCP server: an acting tool
        f'[mcp.servers.srv]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = {json.dumps([str(HOSTILE_MCP), "acting", str(tmp / "mcp-state")])}\n')
    # This process is the server's user for the whole module: the gated patches it stages are offered.
    same_user = pytest.MonkeyPatch()
    same_user.setenv("XDG_CONFIG_HOME", str(xdg))
    same_user.delenv("DEEPSEEK_LS_USER_CONFIG", raising=False)
    fake = FakeDeepSeek().start()
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg), "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    settings = {"index": {"enabled": False}, "llm": {"max_retries": 0}, "policy": {"approval_timeout_seconds": 1}}
    client, state, _ = await start_client(root, "neovim", env, initialization_options=settings)
    shared = Lsp(client, state, root, fake, PatchStore(root, state_dir(root), policy=PathPolicy(root),
                                                      gate=SafetyGate(max_loc_without_approval=1)))
    never = script_message_answers(client, shared)

    @client.feature(names.NOTIFY_QUESTION)
    def question(params: Any) -> None:
        shared.questions.append(params)

    try:
        yield shared
    finally:
        never.set()
        await client.shutdown_session()
        await client.stop()
        fake.stop()
        same_user.undo()


@pytest.fixture
def case(lsp: Lsp, monkeypatch: pytest.MonkeyPatch) -> Lsp:
    """The module's server, fresh for this case's answers; this test is the server's user too."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(lsp.root.parent / "xdg-config"))
    lsp.asked.clear()
    lsp.questions.clear()
    return lsp


def paused_on(case: Lsp, session_id: str, kind: str, answer: str) -> str:
    """The session stopped Paused on this refusal, in few events; returns its reason."""
    events = case.events(session_id)
    last = [e["payload"] for e in events if e["kind"] == "SessionStateChanged@v1"][-1]
    assert last["to_state"] == "Paused" and last["refusal"]["kind"] == kind, last
    assert last["refusal"]["answer"] == answer and SAID[answer] in last["reason"], last
    assert len(events) < MAX_EVENTS
    return last["reason"]


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_lsp_verification_refused(case: Lsp, answer: str | None) -> None:
    tag = uuid.uuid4().hex[:6]
    marker = case.root / f"ran-{tag}"  # in the workspace (bound writable): were it run, the host would see it
    (case.root / "Makefile").write_text(f"test:\n\ttouch {marker}\n")
    case.fake.add({"match": {"role": "planner", "contains": tag}, "content": "```json\n" + json.dumps({
        "goal": "check", "steps": [{"title": f"Check add {tag}", "intent": "edit", "files": ["app.py"]}],
        "verification": ["make test X=1"], "confidence": 0.9}) + "\n```"})
    case.fake.add({"match": {"role": "executor", "contains": tag}, "content": "NO_CHANGE|fine as it is"})
    case.answer = answer
    planned = await run(case.client, names.CMD_PLAN, {"prompt": f"Check add {tag}"})
    sid, (step,) = planned["session_id"], planned["plan"]["steps"]
    try:
        outcome = await case.answered(run(case.client, names.CMD_RUN_STEP, {"session_id": sid, "step_id": step["step_id"]}))
        assert outcome["state"] == "Paused" and "was not run" in outcome["message"]
        assert "make test X=1" in paused_on(case, sid, "bash.run", OURS[answer])
        assert len(case.asked) == 1 and "make test X=1" in case.asked[0].message
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_lsp_mcp_call_refused(case: Lsp, answer: str | None) -> None:
    tag = uuid.uuid4().hex[:6]
    case.fake.add({"match": {"role": "planner", "contains": tag}, "content": "```json\n" + json.dumps({
        "goal": "fix", "steps": [{"title": f"Fix add {tag}", "intent": "edit", "files": ["app.py"]}],
        "verification": ["python -m pytest -q"], "confidence": 0.9}) + "\n```"})
    case.fake.add({"match": {"role": "executor", "contains": tag, "last_role": "user"},
                   "tool_calls": [{"name": "mcp_srv_lookup", "arguments": {"q": tag}}]})
    case.fake.add({"match": {"role": "executor", "contains": tag, "last_role": "tool"}, "content": ADD_FIX})
    case.answer = answer
    planned = await run(case.client, names.CMD_PLAN, {"prompt": f"Fix add {tag}"})
    sid, (step,) = planned["session_id"], planned["plan"]["steps"]
    outcome = await case.answered(run(case.client, names.CMD_RUN_STEP, {"session_id": sid, "step_id": step["step_id"]}))

    assert len(case.asked) == 1 and "mcp" in case.asked[0].message.lower()
    assert not (case.root.parent / "mcp-state" / "calls.jsonl").exists()
    assert case.state.applied_edits == []
    if OURS[answer] == "deny":  # the model is told and goes on: its change is staged for review
        assert outcome["status"] == "staged"
    else:
        assert outcome["status"] == "paused" and outcome["state"] == "Paused"
        assert "mcp_srv_lookup" in paused_on(case, sid, "mcp.call", OURS[answer])
        assert case.events(sid)[-1]["kind"] in ("SessionStateChanged@v1", "ToolResult@v1")


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("command", [names.CMD_ACCEPT_FILE, names.CMD_ACCEPT_ALL])
async def test_no_unapproved_exec_lsp_gated_accept_refused(case: Lsp, command: str, answer: str | None) -> None:
    name = f"cfg_{uuid.uuid4().hex[:6]}.py"
    (case.root / name).write_text(CFG_ORIGINAL)
    patch = case.store.stage(CFG_DIFF.replace("cfg.py", name))
    assert patch.approval_required
    case.answer = answer
    args = {"patch_id": patch.patch_id, **({"uri": file_uri(case.root, name)} if command == names.CMD_ACCEPT_FILE else {})}
    result = await case.answered(run(case.client, command, args))

    message = result["message"] if command == names.CMD_ACCEPT_FILE else result["failed"][0]["message"]
    assert SAID[OURS[answer]] in message, result
    assert len(case.asked) == 1 and name in case.asked[0].message
    assert case.state.applied_edits == [] and (case.root / name).read_text() == CFG_ORIGINAL
    assert {h.status for h in case.store.get(patch.patch_id).hunks} == {"pending"}  # nothing recorded
    said = await wait_until(lambda: [m for m in case.client.messages if patch.patch_id in m.message])
    assert "still pending" in said[-1].message


@pytest.mark.parametrize("answer", [pytest.param(None, id="answer-null"), pytest.param("never", id="no-answer")])
async def test_never_hang_lsp_question_refused(case: Lsp, answer: str | None) -> None:
    tag = uuid.uuid4().hex[:6]
    question = f"Which greeting style for {tag}?"
    case.fake.add({"match": {"role": "planner", "contains": tag}, "content": f"ASK_USER|{question}"})
    planning = asyncio.ensure_future(run(case.client, names.CMD_PLAN, {"prompt": f"Greet {tag}"}))
    (pending,) = await wait_until(lambda: case.questions)
    if answer is None:
        await run(case.client, names.CMD_ANSWER, {"question_id": pending.question_id, "answer": None})
    with pytest.raises(Exception, match="cancelled" if answer is None else "no answer within 1 s"):
        await asyncio.wait_for(planning, 120)
    reason = paused_on(case, pending.session_id, "ask_user", OURS[answer])
    assert question in reason and len(case.questions) == 1
    assert (await case.client.protocol.send_request_async(names.REQ_PENDING_QUESTIONS, {})).questions == []
