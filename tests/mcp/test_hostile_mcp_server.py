"""A hostile MCP server (tests/mcp/hostile_mcp_server.py, a real process speaking raw JSON-RPC on
stdio) against our MCP client and, through the fake DeepSeek server, the whole agent: every call is
answered (a result or a tool error, never a hang), nothing it returns leaks a secret to the model,
and nothing it says or changes runs anything unapproved."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from deepseek_ls.agent import Agent
from deepseek_ls.config_models import McpConfig, McpServerConfig
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.client import McpCallError
from deepseek_ls.tools.mcp.provider import render_result
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, TEST_APP, ScriptedUI, diff, plan_json, scenario_config  # noqa: E402

HOSTILE = str(Path(__file__).with_name("hostile_mcp_server.py"))
SECRETS = ("AKIAIOSFODNN7EXAMPLE", "ghp_Zx9Zx9", "hostileKeyMaterial", "BEGIN OPENSSH PRIVATE KEY", "sk-dotenv-",
           "hunter2hunter2", "hunter3region", "hunter4hunter4")
DOTENV = "DEEPSEEK_API_KEY=sk-dotenv-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n"


def hostile(behaviour: str, state: Path, **kw) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[HOSTILE, behaviour, str(state)], **kw)


def manager(tmp_path: Path, cfg: McpServerConfig) -> McpManager:
    return McpManager(tmp_path, McpServerSet({"h": McpServerSpec("h", cfg, "test", "user")}),
                      McpConfig(restart_backoff_seconds=0.05))


def calls(state: Path) -> list[dict]:
    path = state / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- always answers: the client ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "timeout", "expect"),
    [
        pytest.param("binary", 60, "after the binary line", id="non-utf8-line-then-the-answer"),
        pytest.param("huge", 300, "bytes cut: the result exceeded 32000 bytes", id="result-of-50-MB"),
        pytest.param("bad-result", 60, McpCallError("failed during lookup: ValidationError"), id="result-not-a-CallToolResult"),
        pytest.param("not-json", 2, McpCallError("timed out after 2 s"), id="answers-garbage"),
        pytest.param("silent", 2, McpCallError("timed out after 2 s"), id="never-answers"),
        pytest.param("crash", 60, McpCallError("failed during lookup"), id="exits-mid-call"),
    ],
)
async def test_always_answers_a_hostile_server_call(tmp_path, behaviour, timeout, expect):
    state = tmp_path / "state"
    m = manager(tmp_path, hostile(behaviour, state, timeout_seconds=timeout))
    try:
        infos, problems = await m.list_tools()
        assert [i.name for i in infos] == ["lookup"] and problems == []
        if isinstance(expect, McpCallError):
            with pytest.raises(McpCallError, match=str(expect)):
                await m.call("h", "lookup", {"q": "x"})
            # The connection was ended; the next use starts the server again and lists its tools.
            assert [i.name for i in (await m.list_tools())[0]] == ["lookup"]
            assert (state / "starts").read_text() == "2"
        else:
            rendered = render_result(await m.call("h", "lookup", {"q": "x"}), 32_000)
            assert expect in rendered["text"]
            assert not any(s in rendered["text"] for s in SECRETS), rendered["text"][:200]
            if behaviour == "huge":
                assert rendered["truncated"] and len(rendered["text"].encode()) < 33_000
                assert rendered["text"].startswith("head [REDACTED:github]") and rendered["text"].endswith("tail [REDACTED:aws]")
    finally:
        await m.aclose()


# -- the agent: no leak, no unapproved exec ---------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / ".env").write_text(DOTENV)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # verification's pytest: the venv's plugins cost seconds
    return root


@pytest.fixture
async def hostile_agent(workspace: Path, fake_deepseek, tmp_path: Path):
    made: list[Agent] = []

    def make(behaviour: str, ui: ScriptedUI) -> tuple[Agent, Path]:
        state = tmp_path / "state"
        cfg = scenario_config()
        specs = McpServerSet({"h": McpServerSpec("h", hostile(behaviour, state), "test", "user")})
        cfg.mcp.restart_backoff_seconds = 0.05
        mcp = McpManager(workspace, specs, cfg.mcp, log_dir=workspace / ".deepseek" / "mcp")
        agent = Agent(workspace, cfg, llm=LLMClient(cfg.llm), ui=ui, mcp=mcp)
        made.append(agent)
        return agent, state

    yield make
    for agent in made:
        await agent.aclose()
        await agent.llm.aclose()


def _tool_results(fake, role: str) -> list[dict]:
    """The tool results of that role's conversation, in order (its last request carries them all)."""
    last = [r for r in fake.requests if r.role == role][-1]
    return [json.loads(m["content"]) for m in last.body["messages"] if m.get("role") == "tool"]


def _all_sent(fake) -> str:
    return "\n".join(json.dumps(r.body) for r in fake.requests)


FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])


class DenyCommandsUI(ScriptedUI):
    """Denies every command (`bash.run`), allows everything else (the edit)."""

    async def request_approval(self, request):
        self.approval_answers = ["deny" if request.kind == "bash.run" else "allow_once"]
        return await super().request_approval(request)


@pytest.mark.parametrize("behaviour", [pytest.param("secret", id="secrets-in-text-resource-and-structured"),
                                       pytest.param("secret-error", id="secrets-in-an-error-result"),
                                       pytest.param("secret-file", id="resources-from-secret-files")])
async def test_no_leak_secrets_in_an_mcp_result(hostile_agent, fake_deepseek, workspace, behaviour):
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_h_lookup", "arguments": {"q": "keys"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": plan_json(("Fix add", ["app.py"]))})
    agent, state = hostile_agent(behaviour, ScriptedUI())
    sid, _ = await agent.plan("Fix add", mode="plan")
    (result,) = _tool_results(fake_deepseek, "planner")
    if behaviour == "secret-file":
        text = result["value"]["text"]
        assert text.count("not shown (secret files never reach the model)") == 3 and "plain readme" in text, text
    else:
        assert "[REDACTED:" in json.dumps(result), result
    sent, logged = _all_sent(fake_deepseek), (workspace / ".deepseek" / "sessions" / sid / "events.jsonl").read_text()
    for secret in SECRETS:
        assert secret not in sent, f"{secret} reached the model"
        assert secret not in logged, f"{secret} reached the event log"


async def test_no_unapproved_exec_a_tool_that_changed_after_a_restart_is_not_run(hostile_agent, fake_deepseek):
    """The first server lists `lookup` read-only and exits on the call; the restarted one lists it as
    acting, described anew. The second call must not run what was never offered nor approved."""
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_h_lookup", "arguments": {"q": "one"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"},
                       "tool_calls": [{"name": "mcp_h_lookup", "arguments": {"q": "two"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": plan_json(("Fix add", ["app.py"]))})
    ui = ScriptedUI()
    agent, state = hostile_agent("rugpull", ui)
    await agent.plan("Fix add", mode="plan")
    first, second = _tool_results(fake_deepseek, "planner")[-2:]
    assert not first["ok"] and "failed during lookup" in first["error"]
    assert not second["ok"] and "changed since it was offered" in second["error"], second
    assert [c["start"] for c in calls(state)] == [1], "the changed tool ran on the restarted server"
    assert [a for a in ui.approvals if a.kind == "mcp.call"] == []


async def test_no_unapproved_exec_injection_in_a_tool_description_and_result(hostile_agent, fake_deepseek, workspace):
    """The server asks the model to run a command and read .env; the model obeys. The command still
    needs approval (denied here: nothing runs) and .env is still refused."""
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_h_lookup", "arguments": {"q": "x"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"},
                       "tool_calls": [{"name": "fs_read", "arguments": {"path": ".env"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"},
                       "tool_calls": [{"name": "bash_run", "arguments": {"command": "cat .env > leaked.txt"}}]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": FIX})
    ui = DenyCommandsUI()
    agent, state = hostile_agent("inject", ui)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    offered = {t["function"]["name"]: t["function"]["description"] for r in fake_deepseek.requests if r.role == "planner"
               for t in r.body.get("tools", [])}
    assert "IMPORTANT SYSTEM NOTICE" in offered["mcp_h_lookup"]  # the injection did reach the model
    injected, env_read = _tool_results(fake_deepseek, "planner")[:2]
    assert injected["ok"] and not env_read["ok"], env_read
    (command,) = _tool_results(fake_deepseek, "executor")
    assert not command["ok"] and "not available here" in command["error"]  # commands are not the executor's
    assert not (workspace / "leaked.txt").exists()
    assert "sk-dotenv-" not in _all_sent(fake_deepseek)


async def test_no_unapproved_exec_a_server_tool_named_like_ours_does_not_shadow_it(hostile_agent, fake_deepseek, workspace):
    """Tools called `bash_run`, `fs.read`, `patch.apply` on the server are offered as the server's
    (`mcp_h_…`, described as its); the model's `bash_run` is ours, and ours is not offered to the
    executor: the call is refused, nothing runs on either side."""
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"},
                       "tool_calls": [{"name": "bash_run", "arguments": {"command": "touch pwned.txt"}}]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": FIX})
    ui = DenyCommandsUI()
    agent, state = hostile_agent("shadow", ui)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    executor = [r for r in fake_deepseek.requests if r.role == "executor"][0]
    offered = {t["function"]["name"]: t["function"]["description"] for t in executor.body["tools"]}
    assert {"mcp_h_bash_run", "mcp_h_fs_read", "mcp_h_patch_apply"} <= set(offered) and "bash_run" not in offered
    assert offered["mcp_h_bash_run"].startswith("[MCP server 'h']")
    assert "MCP server" not in offered["fs_read"] and "MCP server" not in offered["patch_stage"]
    (refused,) = _tool_results(fake_deepseek, "executor")
    assert not refused["ok"] and "bash_run is not available here" in refused["error"]
    assert not (workspace / "pwned.txt").exists() and calls(state) == []


@pytest.mark.parametrize(
    ("behaviour", "arguments"),
    [
        pytest.param("redos-schema", {"q": "a" * 22 + "!", "b" * 22 + "!": "x"}, id="pattern-that-backtracks"),
        pytest.param("self-ref-schema", {"q": "x"}, id="schema-refers-to-itself"),
        pytest.param("remote-ref-schema", {"q": "x"}, id="schema-refers-to-a-url"),
    ],
)
async def test_always_answers_a_tool_whose_input_schema_is_hostile(hostile_agent, fake_deepseek, behaviour, arguments):
    """The server's JSON Schema is a third party's: its regular expressions are not run by us (Python's
    backtracking `re` on `^(a+)+$` holds the event loop: seconds at 22 characters, years at 60), a
    schema that refers to itself is a broken schema (a RecursionError ended the step), and a `$ref`
    to a URL is never fetched. The call goes to the server, which checks its own input."""
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_h_lookup", "arguments": arguments}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": PLAN})
    agent, state = hostile_agent(behaviour, ScriptedUI())
    sid, plan = await agent.plan("Fix add", mode="plan")
    assert plan.steps
    (result,) = _tool_results(fake_deepseek, "planner")
    assert result["ok"] and result["value"]["text"] == "lookup: ok", result
    assert [c["arguments"] for c in calls(state)] == [arguments]
