"""The agent using MCP tools end to end: a scripted model (the fake DeepSeek server over HTTP)
calls real MCP servers through the real `ToolHost`, policy and event log; every session replays."""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from pathlib import Path

import pytest

from mcp_kit import children_running, watch_tool_calls
from deepseek_ls.agent import Agent
from deepseek_ls.agent.replay import replay_session
from deepseek_ls.config_models import McpServerConfig
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, TEST_APP, ScriptedUI, diff, plan_json, scenario_config  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # verification's pytest: the venv's plugins cost seconds
    return root


@pytest.fixture
async def mcp_agent(workspace: Path, fake_deepseek):
    """An Agent with the given MCP servers; afterwards its sessions must replay without any server."""
    made: list[tuple[Agent, object]] = []

    def make(servers: dict[str, McpServerConfig], ui=None, config=None) -> Agent:
        cfg = config or scenario_config()
        specs = McpServerSet({n: McpServerSpec(n, c, "test", "user") for n, c in servers.items()})
        mcp = McpManager(workspace, specs, cfg.mcp, log_dir=workspace / ".deepseek" / "mcp")
        agent = Agent(workspace, cfg, llm=LLMClient(cfg.llm), ui=ui or ScriptedUI(), mcp=mcp)
        made.append((agent, cfg))
        return agent

    yield make
    for agent, _ in made:
        await agent.aclose()
        await agent.llm.aclose()
    fake_deepseek.stop()
    for agent, cfg in made:
        for summary in agent.store.list():
            report = await replay_session(workspace, agent.state_dir, cfg, summary.session_id)
            assert report.ok, report.message


class McpAnswerUI(ScriptedUI):
    """Answers `mcp.call` approvals with `answer`, every other approval with allow_once."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer

    async def request_approval(self, request):
        self.approval_answers = [self.answer if request.kind == "mcp.call" else "allow_once"]
        return await super().request_approval(request)


def _tool_messages(request) -> list[dict]:
    return [m for m in request.body["messages"] if m.get("role") == "tool"]


async def test_planner_calls_a_read_only_mcp_tool_without_a_prompt(mcp_agent, fake_deepseek, time_server):
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_time_get_current_time", "arguments": {"timezone": "Europe/Paris"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    ui = ScriptedUI()
    agent = mcp_agent({"time": McpServerConfig(command=time_server)}, ui=ui)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]

    planner = [r for r in fake_deepseek.requests if r.role == "planner"]
    offered = {t["function"]["name"]: t["function"] for t in planner[0].body["tools"]}
    assert "mcp_time_get_current_time" in offered
    assert "timezone" in offered["mcp_time_get_current_time"]["parameters"]["properties"]
    result = json.loads(_tool_messages(planner[1])[0]["content"])
    assert result["ok"] and '"timezone": "Europe/Paris"' in result["value"]["text"]
    assert [a for a in ui.approvals if a.kind == "mcp.call"] == []  # read-only: no prompt in suggest mode
    events = agent.store.open(view["session_id"]).read()
    assert any(e.kind == "McpToolsListed@v1" for e in events)
    assert any(e.kind == "ToolResult@v1" and e.payload["tool"] == "mcp_time_get_current_time" and e.payload["ok"]
               for e in events)
    assert ("status", "MCP tool mcp_time_get_current_time: ok\n") in ui.streamed


@pytest.mark.parametrize(
    ("answer", "ran"),
    [pytest.param("deny", False, id="denied"), pytest.param("allow_once", True, id="allowed")],
)
async def test_no_unapproved_exec_a_mutating_mcp_tool_asks_first(mcp_agent, fake_deepseek, everything_js, answer, ran):
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_every_toggle-simulated-logging", "arguments": {}}]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": FIX})
    ui = McpAnswerUI(answer)
    agent = mcp_agent({"every": McpServerConfig(command="node", args=[everything_js, "stdio"])}, ui=ui)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]

    asked = [a for a in ui.approvals if a.kind == "mcp.call"]
    assert len(asked) == 1 and asked[0].title == "Run MCP tool every/toggle-simulated-logging"
    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    result = json.loads(_tool_messages(executor[1])[0]["content"])
    assert result["ok"] is ran
    if ran:
        assert "logging" in result["value"]["text"].lower()
    else:
        assert "denied" in result["error"]
    # Planning is read-only: the mutating tool is not offered there, only to the executor.
    planner_tools = {t["function"]["name"] for t in fake_deepseek.requests[0].body["tools"]}
    executor_tools = {t["function"]["name"] for t in executor[0].body["tools"]}
    assert "mcp_every_echo" in planner_tools and "mcp_every_toggle-simulated-logging" not in planner_tools
    assert "mcp_every_toggle-simulated-logging" in executor_tools


async def test_no_unapproved_exec_approval_mode_never_blocks_mutating_mcp_tools(mcp_agent, fake_deepseek, everything_js):
    cfg = scenario_config()
    cfg.policy.approval_mode = "never"
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_every_echo", "arguments": {"message": "read is fine"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_every_toggle-simulated-logging", "arguments": {}}]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": FIX})
    ui = ScriptedUI()
    agent = mcp_agent({"every": McpServerConfig(command="node", args=[everything_js, "stdio"])}, ui=ui, config=cfg)
    await agent.run("Fix add")
    planner = [r for r in fake_deepseek.requests if r.role == "planner"]
    assert json.loads(_tool_messages(planner[1])[0]["content"])["value"]["text"] == "Echo: read is fine"
    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    refused = json.loads(_tool_messages(executor[1])[0]["content"])
    assert not refused["ok"] and "disabled by policy" in refused["error"]
    assert ui.approvals == []


async def test_a_server_killed_mid_call_is_a_tool_error_and_the_session_goes_on(mcp_agent, fake_deepseek, everything_js,
                                                                               monkeypatch):
    marker = f"--marker-{uuid.uuid4().hex}"
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_every_trigger-long-running-operation",
                                       "arguments": {"duration": 30, "steps": 3}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    agent = mcp_agent({"every": McpServerConfig(command="node", args=[everything_js, "stdio", marker])})

    import asyncio

    calling = watch_tool_calls(monkeypatch)

    async def kill_when_called() -> None:
        await asyncio.wait_for(calling.wait(), 120)  # the planner's tool call is on its way to the server
        for pid in children_running(marker):
            os.kill(pid, signal.SIGKILL)

    killer = asyncio.create_task(kill_when_called())
    view = await agent.run("Fix add")
    await killer
    assert view["state"] == "Completed", view["last_error"]
    planner = [r for r in fake_deepseek.requests if r.role == "planner"]
    result = json.loads(_tool_messages(planner[1])[0]["content"])
    assert not result["ok"] and "'every' failed during trigger-long-running-operation" in result["error"]


async def test_an_unavailable_server_is_reported_and_planning_goes_on(mcp_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    ui = ScriptedUI()
    agent = mcp_agent({"gone": McpServerConfig(command=str(workspace / "missing-server"))}, ui=ui)
    sid, plan = await agent.plan("Fix add", mode="plan")
    assert plan.steps
    assert any(ch == "status" and "MCP: MCP server 'gone' could not start" in text for ch, text in ui.streamed)
    listed = [e for e in agent.store.open(sid).read() if e.kind == "McpToolsListed@v1"]
    assert listed and listed[0].payload["tools"] == [] and "could not start" in listed[0].payload["problems"][0]
