"""Planning: invalid plan → re-ask → escalation → readable failure; routing by complexity;
max-think budget; AskUser round trips."""

from __future__ import annotations

import pytest

from scenario_kit import ScriptedUI, diff, plan_json, scenario_config, states

from deepseek_ls.agent import AgentFailure

COMPLEX = (
    "Design the architecture for a deterministic replay of sessions: it must guarantee identical plans "
    "across app.py, util.py, tests/test_app.py and pytest.ini; refactor the state machine and keep it backward compatible."
)


def planner_models(fake) -> list[str]:
    return [r.body["model"] for r in fake.requests if r.role == "planner"]


async def test_invalid_plan_is_reasked_then_escalated_then_fails_readably(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner"}, "content": "I would edit app.py somehow.", "repeat": True})
    agent = make_agent()
    with pytest.raises(AgentFailure, match="did not produce a valid plan"):
        await agent.plan("Fix the greeting")
    assert planner_models(fake_deepseek) == ["deepseek-v4-flash", "deepseek-v4-flash", "deepseek-v4-pro"]
    second = fake_deepseek.requests[1].body["messages"][-1]["content"]
    assert "could not be used as a plan" in second and "could not read a plan" in second
    sid = agent.store.list()[0].session_id
    view = agent.session_view(sid)
    assert view["state"] == "Failed" and "valid plan" in view["last_error"]
    escalations = [d for d in view["decisions"] if d["escalation"]]
    assert len(escalations) == 1 and "INVALID_PLAN" in escalations[0]["reason_codes"]


async def test_invalid_then_valid_plan_after_escalation(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner", "model": "deepseek-v4-flash"}, "content": "no plan", "repeat": True})
    fake_deepseek.add({"match": {"role": "planner", "model": "deepseek-v4-pro"},
                       "content": "ARCHITECT_PLAN_V1\nPLAN|Fix greet\nFILE|app.py|edit\nVERIFY|python -m pytest -q\nARCHITECT_PLAN_END"})
    agent = make_agent()
    sid, plan = await agent.plan("Fix the greeting")
    assert plan.steps[0].files == ["app.py"] and plan.verification == ["python -m pytest -q"]
    assert agent.session_view(sid)["state"] == "Paused"


async def test_router_picks_max_think_for_complex_multi_file_and_fast_for_small(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"])), "repeat": True})
    agent = make_agent()
    big_sid, _ = await agent.plan(COMPLEX)
    small_sid, _ = await agent.plan("Fix the typo in app.py")
    assert planner_models(fake_deepseek) == ["deepseek-v4-pro", "deepseek-v4-flash"]
    big = agent.explain_routing(big_sid)
    small = agent.explain_routing(small_sid)
    assert big["profile"] == "max_think" and big["score"] >= big["threshold"]
    assert big["text"].startswith("max-think: ") and "files touched" in big["text"]
    assert small["profile"] == "fast" and small["text"].startswith("fast: ")


async def test_budget_exhausted_keeps_fast_and_says_so(make_agent, fake_deepseek):
    cfg = scenario_config()
    cfg.llm.profiles["max_think"].max_tokens_per_session = 50
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"])),
                       "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}, "repeat": True})
    agent = make_agent(config=cfg)
    sid, _ = await agent.plan(COMPLEX)  # max-think, spends 120 of 50 tokens
    await agent.revise_plan(sid, COMPLEX)  # would be max-think again, but the budget is spent
    assert planner_models(fake_deepseek) == ["deepseek-v4-pro", "deepseek-v4-flash"]
    why = agent.explain_routing(sid)
    assert why["profile"] == "fast" and "MAX_THINK_BUDGET_EXHAUSTED" in why["reason_codes"]
    assert why["text"].startswith("fast: max-think budget spent (120/50 tokens")
    assert why["score"] >= why["threshold"]


async def test_ask_user_round_trip_then_plan(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": "ASK_USER|Which greeting style?"})
    fake_deepseek.add({"match": {"role": "planner", "contains": "The user answered: formal"}, "content": plan_json(("Fix greet", ["app.py"]))})
    ui = ScriptedUI(answers=["formal"])
    agent = make_agent(ui)
    sid, plan = await agent.plan("Change the greeting")
    assert ui.questions == ["Which greeting style?"]
    assert plan.steps[0].title == "Fix greet"
    assert states(agent, sid) == ["Planning", "AwaitingUserInput", "Planning", "Paused"]
    assert agent.session_view(sid)["questions"] == [{"question": "Which greeting style?", "answer": "formal", "cancelled": False}]


async def test_ask_user_is_bounded_to_two_cycles(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner", "contains": "No more questions"}, "content": plan_json(("Fix", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "planner"}, "content": "ASK_USER|And what else?", "repeat": True})
    ui = ScriptedUI(answers=["a", "b", "c"])
    agent = make_agent(ui)
    sid, plan = await agent.plan("Change it")
    assert len(ui.questions) == 2 and plan.steps[0].title == "Fix"


async def test_ask_user_cancel_pauses_with_question_recorded_and_resumes(make_agent, fake_deepseek):
    """A cancelled question pauses the session (it used to go back to Idle, from where a step could
    not run again); running the session again asks again and goes on."""
    from deepseek_ls.agent import SessionCancelled

    fake_deepseek.add({"match": {"role": "planner"}, "content": "ASK_USER|Which file?"})
    ui = ScriptedUI(answers=[None])
    agent = make_agent(ui)
    with pytest.raises(SessionCancelled):
        await agent.plan("Change it")
    sid = agent.store.list()[0].session_id
    view = agent.session_view(sid)
    assert view["state"] == "Paused" and "Which file?" in view["state_reason"] and "cancelled" in view["state_reason"]
    assert view["refusal"] == {"kind": "ask_user", "answer": "cancel", "subject": "the question 'Which file?'",
                               "reason": ""}
    assert view["questions"] == [{"question": "Which file?", "answer": None, "cancelled": True}]

    fake_deepseek.add({"match": {"role": "planner", "contains": "app.py"},
                       "content": plan_json(("Fix", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "planner"}, "content": "ASK_USER|Which file?"})
    fake_deepseek.add({"match": {"role": "executor"},
                       "content": diff("app.py", ["    return a - b"], ["    return a + b"], start=6)})
    ui.answers = ["app.py"]
    resumed = await agent.run(session_id=sid)
    assert ui.questions == ["Which file?", "Which file?"]
    assert resumed["state"] == "Completed", resumed["state_reason"]


async def test_planner_prompt_has_repo_map_and_index_hits_from_the_real_index(workspace, fake_deepseek):
    from deepseek_ls.agent import Agent
    from deepseek_ls.index import CodeIndex
    from deepseek_ls.llm.client import LLMClient
    from deepseek_ls.workspace import state_dir

    cfg = scenario_config()
    cfg.index.enabled = True
    index = CodeIndex(workspace, state_dir(workspace), cfg.index)
    index.build()
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"]))})
    agent = Agent(workspace, cfg, llm=LLMClient(cfg.llm), ui=ScriptedUI(), index=index)
    try:
        await agent.plan("Fix the add function")
    finally:
        await agent.llm.aclose()
    messages = fake_deepseek.requests[0].body["messages"]
    repo_map, request = messages[1]["content"], messages[2]["content"]
    assert repo_map.startswith("Repository map") and "app.py" in repo_map and "util.py" in repo_map
    assert "Index hits for the request" in request and "app.py" in request.split("Index hits for the request")[1]
    # with the line the words are on (line hits read from the file when the hit is shown)
    assert "- app.py 5: def add(a, b):" in request.split("Index hits for the request")[1]


async def test_low_confidence_fast_plan_is_redone_on_max_think(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "planner", "model": "deepseek-v4-flash"}, "content": plan_json(("Guess", ["app.py"]), confidence=0.3)})
    fake_deepseek.add({"match": {"role": "planner", "model": "deepseek-v4-pro", "contains": "confidence 0.30"},
                       "content": plan_json(("Fix add", ["app.py"]), confidence=0.9)})
    agent = make_agent()
    sid, plan = await agent.plan("Fix the arithmetic")
    assert plan.steps[0].title == "Fix add" and plan.confidence == 0.9
    why = agent.explain_routing(sid)
    assert why["escalation"] and "LOW_CONFIDENCE_PLAN" in why["reason_codes"]


async def test_planner_cannot_run_write_tools_even_if_it_asks(make_agent, fake_deepseek, workspace):
    raw = "--- a/app.py\n+++ b/app.py\n@@ -6,1 +6,1 @@\n-    return a - b\n+    return a + b\n"
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "patch_stage", "arguments": {"diff": raw}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool", "last_contains": "not available here"},
                       "content": plan_json(("Fix add", ["app.py"]))})
    agent = make_agent()
    sid, plan = await agent.plan("Fix add")
    assert plan.steps[0].title == "Fix add"
    assert agent.session_view(sid)["patches"] == [] and agent.patches.pending() == []
