"""Intent routing in the agent (`Agent.turn`): a question is answered without a plan, a change
request is planned first and carried out, an unsure prompt asks the fast model and records why;
the person's flags win. Every session replays exactly (the `make_agent` fixture checks it), the
fast model's word served back from the log."""

from __future__ import annotations

import pytest

from deepseek_ls.agent.intent import TurnFlags
from scenario_kit import ScriptedUI, diff, kinds, plan_json

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)


def roles(fake) -> list[str]:
    return [r.role for r in fake.requests]


async def test_a_question_is_answered_without_a_plan(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "chat"}, "content": "Because add subtracts."})
    agent = make_agent()
    out = await agent.turn("why does test_add fail?")
    assert out["answer"]["content"] == "Because add subtracts."
    assert out["intent"] | {"cues": []} == {"intent": "question", "route": "answer", "source": "heuristic",
                                            "sure": True, "reason": "EN_QUESTION_WORD", "cues": [],
                                            "model_answer": None}
    assert roles(fake_deepseek) == ["chat"]  # no planner, no classifier call
    assert out["view"]["state"] == "Completed" and out["view"]["plan"] is None
    assert "IntentClassified@v1" in kinds(agent, out["session_id"])


async def test_a_change_request_is_planned_then_applied(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]),
                                                                          verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(approvals=["allow_once"])
    agent = make_agent(ui)
    out = await agent.turn("修复 test_add")
    assert out["intent"]["route"] == "execute" and out["intent"]["reason"] == "ZH_IMPERATIVE"
    assert "answer" not in out
    assert out["view"]["state"] == "Completed"
    assert "return a + b" in (workspace / "app.py").read_text()
    assert [a.kind for a in ui.approvals] == ["patch.apply"]
    assert roles(fake_deepseek)[:2] == ["planner", "executor"]


async def test_plan_mode_only_plans_a_change(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
    agent = make_agent()
    out = await agent.turn("fix the add function", mode="plan")
    assert out["intent"]["route"] == "plan"
    assert out["view"]["state"] == "Paused" and out["view"]["plan"]["steps"][0]["title"] == "Fix add"
    assert "a - b" in (workspace / "app.py").read_text()
    assert roles(fake_deepseek) == ["planner"]


async def test_an_unsure_prompt_asks_the_fast_model_and_records_its_word(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "intent"}, "content": "QUESTION"})
    fake_deepseek.add({"match": {"role": "chat"}, "content": "add subtracts b from a."})
    agent = make_agent()
    out = await agent.turn("test_add fails")
    assert roles(fake_deepseek) == ["intent", "chat"]
    intent_request = fake_deepseek.requests[0]
    assert intent_request.body["messages"][-1]["content"] == "test_add fails"
    assert not intent_request.body.get("tools")
    assert out["intent"]["source"] == "model" and out["intent"]["sure"] is False
    assert out["intent"]["model_answer"] == "QUESTION"
    assert "no sentence reads" in out["intent"]["reason"]


async def test_when_the_model_cannot_tell_the_prompt_is_answered_and_the_reason_says_how_to_change(
        make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "intent"}, "content": "UNSURE"})
    fake_deepseek.add({"match": {"role": "chat"}, "content": "It could go either way."})
    agent = make_agent()
    out = await agent.turn("why does test_add fail? fix it")
    assert out["intent"]["source"] == "default" and out["intent"]["route"] == "answer"
    assert "/run" in out["intent"]["reason"] and "both asks and requests" in out["intent"]["reason"]
    assert "a - b" in (workspace / "app.py").read_text()


@pytest.mark.parametrize(("flags", "prompt", "route", "calls"), [
    pytest.param(TurnFlags(tools=False), "fix the add function", "answer", ["chat"], id="tools-false"),
    pytest.param(TurnFlags(plan_only=True), "why does test_add fail?", "plan", ["planner"], id="plan-only"),
])
async def test_the_person_s_flags_win_over_the_reading(make_agent, fake_deepseek, flags, prompt, route, calls):
    fake_deepseek.add({"match": {"role": "chat"}, "content": "answer"})
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
    agent = make_agent()
    out = await agent.turn(prompt, flags=flags)
    assert out["intent"]["source"] == "flag" and out["intent"]["route"] == route
    assert roles(fake_deepseek) == calls


async def test_force_execute_in_plan_mode_runs_the_loop_in_agent_mode(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]),
                                                                          verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent(ScriptedUI(approvals=["allow_once"]))
    out = await agent.turn("the add function", mode="plan", flags=TurnFlags(force_execute=True))
    assert out["view"]["mode"] == "agent" and out["view"]["state"] == "Completed"
    assert "return a + b" in (workspace / "app.py").read_text()


def test_contradicting_flags_are_refused():
    with pytest.raises(ValueError, match="cannot be used together"):
        TurnFlags(plan_only=True, force_execute=True)
    with pytest.raises(ValueError, match="--tools=false"):
        TurnFlags(tools=False, force_execute=True)


async def test_an_at_mention_attaches_the_file_and_a_missing_one_is_named(make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "chat"}, "content": "It greets."})
    agent = make_agent()
    out = await agent.turn("what does @util.py do? and @nope.py?")
    assert out["attached"] == ["util.py", "nope.py"]
    sent = "\n".join(m["content"] for m in fake_deepseek.requests[0].body["messages"])
    assert "def double(x):" in sent
    assert sent.count("def double(x):") == 1  # attached once, not read again as a named path
    assert "File: nope.py (not attached: no such file in the workspace)" in sent


async def test_an_at_mention_of_a_secret_file_is_refused(make_agent, fake_deepseek, workspace):
    (workspace / ".env").write_text("API_TOKEN=sk-live-canary-0123456789abcdef\n")
    fake_deepseek.add({"match": {"role": "chat"}, "content": "ok"})
    agent = make_agent()
    await agent.turn("what is in @.env?")
    sent = "\n".join(m["content"] for m in fake_deepseek.requests[0].body["messages"])
    assert "canary" not in sent
    assert "File: .env (not shown:" in sent
