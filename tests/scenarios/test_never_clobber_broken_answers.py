"""Broken and hostile model answers met by the real agent: the session stops (or goes on) with a
clear message, nothing partial is staged or applied, the user's files and the event log stay
intact, and the API key never lands in the event log. The fake DeepSeek streams byte for byte
over real HTTP (`fault.raw_events`); nothing of ours is mocked.
"""

from __future__ import annotations

import json

import pytest

from deepseek_ls.agent import AgentFailure
from deepseek_ls.config_models import ModelProfile
from deepseek_ls.llm.errors import LLMError
from scenario_kit import APP, diff, plan_json, scenario_config

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])
KEY = "sk-SCENARIOCANARY-9f8e7d6c5b4a"


def data(obj) -> str:
    return "data: " + json.dumps(obj) + "\n\n"


def text(t: str) -> str:
    return data({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]})


def pieces(body: str, size: int = 16) -> list[str]:
    return [text(body[i:i + size]) for i in range(0, len(body), size)]


def stage_call(arguments: str) -> str:
    part = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "patch_stage", "arguments": arguments}}
    return data({"choices": [{"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": None}]})


DONE = "data: [DONE]\n\n"
CUT = ADD_FIX.index("+    return a") + 9  # mid-word: "+    retu"
STAGE_ARGS = json.dumps({"diff": ADD_FIX.strip("`").removeprefix("diff\n")})


def event_log_lines(agent) -> list[dict]:
    files = list(agent.state_dir.rglob("events.jsonl"))
    assert files, "no event log"
    return [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines()]


def assert_untouched(agent, workspace, sid) -> None:
    assert (workspace / "app.py").read_text() == APP
    kinds = [e.kind for e in agent.store.open(sid).read()]
    assert "PatchStaged@v1" not in kinds and "PatchApplied@v1" not in kinds
    assert event_log_lines(agent)  # every line of the log still parses


@pytest.mark.parametrize("fault, words", [
    pytest.param({"raw_events": pieces(ADD_FIX[:CUT])}, "ended without", id="no-done-no-finish-mid-diff"),
    pytest.param({"raw_events": [text("Staging the fix."), stage_call(STAGE_ARGS[:40])]}, "ended without",
                 id="no-done-mid-tool-call-arguments"),
    pytest.param({"raw_events": [*pieces(ADD_FIX[:CUT])], "cut_after_chunks": len(pieces(ADD_FIX[:CUT])),
                  "cut_with": "stall"}, "idle timeout", id="silence-mid-diff"),
    pytest.param({"raw_events": [*pieces(ADD_FIX[:CUT])], "cut_after_chunks": len(pieces(ADD_FIX[:CUT])),
                  "cut_with": "keepalives"}, "idle timeout", id="keepalives-forever-mid-diff"),
    pytest.param({"raw_events": [*pieces(ADD_FIX[:CUT]), data({"choices": [{"index": 0, "delta": "garbage"}]})]},
                 "malformed", id="garbled-chunk-mid-diff"),
    pytest.param({"raw_events": pieces(ADD_FIX[:CUT]), "flood": text("+    x = 1\n" * 90)}, "MiB",
                 id="answer-that-never-ends"),
    # `[DONE]` without a finish_reason: the stream was closed politely, the answer may still be cut.
    pytest.param({"raw_events": [*pieces(ADD_FIX[:CUT]), DONE]}, "without a finish_reason",
                 id="done-without-finish-mid-diff"),
    pytest.param({"raw_events": [*pieces(ADD_FIX), DONE]}, "without a finish_reason",
                 id="done-without-finish-after-a-whole-looking-diff"),
    pytest.param({"raw_events": [text("Staging the fix."), stage_call(STAGE_ARGS), DONE]}, "without a finish_reason",
                 id="done-without-finish-after-a-whole-looking-tool-call"),
])
async def test_never_clobber_on_an_answer_that_breaks_mid_way(make_agent, fake_deepseek, workspace, fault, words):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "fault": fault, "repeat": True})
    cfg = scenario_config()
    cfg.llm.idle_timeout_seconds = 1.0
    cfg.llm.profiles["fast"] = ModelProfile(model="deepseek-v4-flash", max_tokens=100)  # size cap: 8 MiB
    agent = make_agent(config=cfg)
    with pytest.raises((AgentFailure, LLMError)):
        await agent.run("Fix add")
    sid = agent.store.list()[0].session_id
    view = agent.session_view(sid)
    assert view["state"] == "Failed"
    assert words in view["last_error"] and "\n" not in view["last_error"]
    assert_untouched(agent, workspace, sid)


@pytest.mark.parametrize("arguments", [
    pytest.param('{"diff": "--- a/app.py\\n+++ b/app.py\\n@@ -6', id="invalid-json"),
    pytest.param('["not", "an", "object"]', id="not-an-object"),
])
async def test_never_clobber_on_tool_arguments_that_are_not_json(make_agent, fake_deepseek, workspace, arguments):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "patch_stage", "arguments": arguments}]})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    retry = [r for r in fake_deepseek.requests if r.role == "executor"][1].body["messages"]
    assert "invalid JSON arguments" in retry[-1]["content"] or "must be a JSON object" in retry[-1]["content"]


async def test_never_clobber_on_a_tool_that_was_not_offered(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "executor"}, "content": "Let me clean up first.",
                       "tool_calls": [{"name": "shell_rm_rf", "arguments": {"path": "."}},
                                      {"name": "fs_write", "arguments": {"path": "app.py", "content": ""}}]})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    assert (workspace / "util.py").exists()


async def test_never_clobber_with_many_tool_calls_in_one_answer(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "executor"},
                       "tool_calls": [{"name": "fs_read", "arguments": {"path": "util.py"}} for _ in range(200)]})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    answered = [m for m in fake_deepseek.requests[-1].body["messages"] if m.get("role") == "tool"]
    assert len(answered) == 200  # every call answered, as the API requires


async def test_always_answers_with_negative_usage_and_the_cost_never_goes_negative(make_agent, fake_deepseek, workspace):
    bad = {"prompt_tokens": -1000, "completion_tokens": -50, "total_tokens": -1050,
           "prompt_cache_hit_tokens": -5, "prompt_cache_miss_tokens": -995}
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, "usage": bad})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX, "usage": {"prompt_tokens": "many"}})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    session = view["cost"]["session"]
    assert all(v >= 0 for v in session["tokens"].values()), session
    assert session["tokens"]["total"] > 0  # counted locally where the server's numbers were unusable
    assert session["cost"] is None or session["cost"] >= 0
    calls = [e.payload for e in agent.store.open(view["session_id"]).read() if e.kind == "LLMCall@v1"]
    assert all(min(c["usage"]["prompt_tokens"], c["usage"]["completion_tokens"]) >= 0 for c in calls)


@pytest.mark.parametrize("status", [401, 403, 429, 500])
async def test_no_leak_api_key_echoed_by_the_server_into_the_event_log(make_agent, fake_deepseek, workspace,
                                                                      monkeypatch, status):
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    fake_deepseek.add({"match": {"role": "planner"}, "repeat": True,
                       "fault": {"status": status, "body": {"error": {"message": f"Incorrect API key provided: {KEY}"}}}})
    cfg = scenario_config()
    cfg.llm.retry_base_seconds = 0.001
    agent = make_agent(config=cfg)
    with pytest.raises((AgentFailure, LLMError)):
        await agent.run("Fix add")
    sid = agent.store.list()[0].session_id
    view = agent.session_view(sid)
    assert view["state"] == "Failed" and str(status) in view["last_error"]
    assert KEY not in json.dumps(view, default=str)
    for path in agent.state_dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the API key is in {path.relative_to(agent.state_dir)}"
    assert (workspace / "app.py").read_text() == APP
