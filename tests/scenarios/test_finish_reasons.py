"""Answers that do not end with finish_reason "stop": continued, retried or stopped honestly —
never staged or applied partially. Real agent, fake DeepSeek streaming real-shaped chunks."""

from __future__ import annotations

import pytest

from deepseek_ls.agent import AgentFailure
from deepseek_ls.agent.finish import CONTINUE_PROMPT, SHORTER_PROMPT
from scenario_kit import APP, diff, plan_json, scenario_config

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
CUT = ADD_FIX.index("+    return a") + 9  # mid-line: "+    retu" | "rn a + b\n```"
PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])


async def failed_run(agent, prompt):
    with pytest.raises(AgentFailure):
        await agent.run(prompt)
    return agent.session_view(agent.store.list()[0].session_id)


def finish_events(agent, sid):
    return [e.payload for e in agent.store.open(sid).read() if e.kind == "FinishReasonHandled@v1"]


async def test_length_answer_is_continued_and_the_joined_diff_applied(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "cut off by the output limit"}, "content": ADD_FIX[CUT:]})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": "length"})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    events = finish_events(agent, view["session_id"])
    assert [(e["finish_reason"], e["action"]) for e in events] == [("length", "continue")]
    continuation = [r for r in fake_deepseek.requests if r.role == "executor"][1].body["messages"]
    assert continuation[-2] == {"role": "assistant", "content": ADD_FIX[:CUT]}
    assert continuation[-1]["content"] == CONTINUE_PROMPT


async def test_never_stage_an_answer_still_cut_off_after_the_continuations(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": "length", "repeat": True})
    cfg = scenario_config()
    cfg.agent_loop.max_continuations = 1
    agent = make_agent(config=cfg)
    view = await failed_run(agent, "Fix add")
    assert view["state"] == "Failed"
    assert "cut off by the output limit" in view["last_error"]
    assert (workspace / "app.py").read_text() == APP
    sid = view["session_id"]
    kinds = [e.kind for e in agent.store.open(sid).read()]
    assert "PatchStaged@v1" not in kinds
    assert [e["action"] for e in finish_events(agent, sid)] == ["continue", "stop"]


async def test_insufficient_system_resource_is_retried_then_applied(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": "insufficient_system_resource"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    cfg = scenario_config()
    cfg.llm.retry_base_seconds = 0.01
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    events = finish_events(agent, view["session_id"])
    assert [(e["finish_reason"], e["action"]) for e in events] == [("insufficient_system_resource", "retry")]
    # The retry is the same request again, not a continuation of the broken answer.
    first, second = [r.body["messages"] for r in fake_deepseek.requests if r.role == "executor"]
    assert first == second


@pytest.mark.parametrize("reason, expected", [
    pytest.param("content_filter", "content filter", id="content_filter"),
    pytest.param("insufficient_system_resource", "ran out of resources", id="resources_exhausted"),
])
async def test_never_apply_an_answer_the_provider_stopped(make_agent, fake_deepseek, workspace, reason, expected):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": reason, "repeat": True})
    cfg = scenario_config()
    cfg.llm.retry_base_seconds = 0.01
    cfg.agent_loop.resource_retries = 1
    agent = make_agent(config=cfg)
    view = await failed_run(agent, "Fix add")
    assert view["state"] == "Failed"
    assert expected in view["last_error"]
    assert (workspace / "app.py").read_text() == APP
    actions = [e["action"] for e in finish_events(agent, view["session_id"])]
    assert actions == (["retry", "stop"] if reason == "insufficient_system_resource" else ["stop"])


async def test_cut_off_tool_call_is_not_run_and_asked_again_shorter(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": SHORTER_PROMPT[:40]}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "executor"}, "finish_reason": "length",
                       "tool_calls": [{"name": "patch_stage", "arguments": '{"diff": "--- a/app.py\\n+++ b/app.py\\n@@ -6'}]})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    sid = view["session_id"]
    assert [e["action"] for e in finish_events(agent, sid)] == ["retry"]
    tools_run = [e.payload["tool"] for e in agent.store.open(sid).read() if e.kind == "ToolResult@v1"]
    assert "patch.stage" in tools_run and tools_run.count("patch.stage") == 1  # only the whole diff was staged


async def test_always_answers_when_usage_details_are_null(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, "usage": {"completion_tokens_details": None}})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX,
                       "usage": {"completion_tokens_details": None, "prompt_cache_hit_tokens": None}})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]


def test_cli_run_continues_a_cut_answer_and_says_so(workspace, fake_deepseek_process):
    from test_cli_resume import cli, env_for
    import subprocess

    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": PLAN},
        {"match": {"role": "executor", "contains": "cut off by the output limit"}, "content": ADD_FIX[CUT:]},
        {"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": "length"},
    ])
    done = subprocess.run(cli("run", "Fix add"), cwd=workspace, env=env_for(fake.base_url), input="y\n",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "finish_reason=length" in done.stderr
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")


def test_cli_autopilot_stops_honestly_on_content_filter(workspace, fake_deepseek_process):
    from scenario_kit import trust_workspace
    from test_cli_resume import cli, env_for
    import subprocess

    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": PLAN},
        {"match": {"role": "executor"}, "content": ADD_FIX[:CUT], "finish_reason": "content_filter"},
    ])
    env = {**env_for(fake.base_url), "XDG_CONFIG_HOME": str(workspace.parent / "xdg")}
    trust_workspace(workspace, env)  # autopilot runs only in a trusted workspace
    done = subprocess.run(cli("autopilot", "Fix add"), cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "content filter" in done.stderr and "Traceback" not in done.stderr
    assert (workspace / "app.py").read_text() == APP
