"""The runaway guard (agent/runaway.py): a model that repeats itself pauses the session with the reason,
instead of spending calls until the failure budget or the cost cap stops it.

The model is the fake DeepSeek server over loopback; every session is replayed by the `make_agent`
fixture afterwards (`RunawayDetected@v1` is a compared event, so the replay must trip the same way).
"""

from __future__ import annotations

from scenario_kit import diff, plan_json, scenario_config

from deepseek_ls.agent.replay import replay_session

PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])
ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
READ_APP = {"name": "fs_read", "arguments": {"path": "app.py"}}


def _events(agent, sid: str, kind: str) -> list[dict]:
    return [e.payload for e in agent.store.open(sid).read() if e.kind == kind]


def _executor_calls(fake) -> int:
    return [r.role for r in fake.requests].count("executor")


async def test_the_same_tool_call_again_and_again_pauses_after_n(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "repeat": True, "tool_calls": [READ_APP]})
    agent = make_agent()
    view = await agent.run("Fix add")
    sid = view["session_id"]
    assert view["state"] == "Paused", view.get("last_error")
    assert _executor_calls(fake_deepseek) == 4  # the old code asked until max_iterations failed the session
    reason = view["state_reason"]
    assert "fs_read" in reason and "app.py" in reason and "4 times in a row" in reason
    assert "agent_loop.runaway_repeats = 4" in reason
    [tripped] = _events(agent, sid, "RunawayDetected@v1")
    assert tripped["streak"] == "tool_call" and tripped["count"] == 4 and tripped["limit"] == 4
    assert view["plan"]["steps"][0]["status"] == "pending"  # paused, not failed: the step runs again on resume

    # Replay reproduces the pause; a replay with another limit does not, and says so.
    assert (await replay_session(workspace, agent.state_dir, scenario_config(), sid)).ok
    looser = scenario_config()
    looser.agent_loop.runaway_repeats = 6
    assert not (await replay_session(workspace, agent.state_dir, looser, sid)).ok


async def test_a_resumed_session_counts_again_from_zero(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    config = scenario_config()
    config.agent_loop.runaway_repeats = 3
    for spaced in ('{"path": "app.py"}', '{"path":"app.py"}', '{ "path" : "app.py" }'):  # one call, canonically
        fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "fs_read", "arguments": spaced}]})
    agent = make_agent(config=config)
    view = await agent.run("Fix add")
    assert view["state"] == "Paused" and "3 times in a row" in view["state_reason"], view.get("last_error")
    # One more identical call after the resume does not trip it again at once.
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"}, "tool_calls": [READ_APP]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": ADD_FIX})
    view = await agent.run(session_id=view["session_id"])
    assert view["state"] == "Completed", view.get("state_reason")
    assert "a + b" in (workspace / "app.py").read_text()


async def test_the_same_failing_edit_pauses_after_n(make_agent, fake_deepseek, workspace):
    stale = diff("app.py", ["    return a * b"], ["    return a + b"], start=6)  # context not in the file
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "repeat": True, "content": stale})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Paused", view.get("last_error")
    assert "the same edit failed" in view["state_reason"] and "4 times in a row" in view["state_reason"]
    assert _executor_calls(fake_deepseek) == 4
    [tripped] = _events(agent, view["session_id"], "RunawayDetected@v1")
    assert tripped["streak"] == "failing_edit"
    assert "a - b" in (workspace / "app.py").read_text()  # nothing was written


async def test_the_same_verification_failure_pauses_after_n(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "repeat": True, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "repeat": True, "content": "NO_CHANGE|already fine"})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Paused", view.get("last_error")  # the old code failed at max_iterations
    reason = view["state_reason"]
    assert "verification `python -m pytest -q -k add` failed the same way 4 times in a row" in reason
    sid = view["session_id"]
    runs = _events(agent, sid, "VerificationRun@v1")
    assert len(runs) == 4 and not any(r["ok"] for r in runs)
    [tripped] = _events(agent, sid, "RunawayDetected@v1")
    assert tripped["streak"] == "verification_failure" and tripped["count"] == 4


async def test_a_model_that_varies_its_calls_does_not_trip(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    for path in ("app.py", "app.py", "app.py", "util.py", "app.py", "app.py", "app.py"):  # never 4 in a row
        fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "fs_read", "arguments": {"path": path}}]})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view.get("state_reason")
    assert _executor_calls(fake_deepseek) == 8
    assert not _events(agent, view["session_id"], "RunawayDetected@v1")


async def test_the_token_cap_pauses_the_session_with_the_reason(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    config = scenario_config()
    config.budget.max_tokens = 1  # the planner's call passes it: nothing more is spent
    agent = make_agent(config=config)
    view = await agent.run("Fix add")
    assert view["state"] == "Paused", view.get("last_error")
    assert "token budget reached" in view["state_reason"] and "budget.max_tokens" in view["state_reason"]
    assert [r.role for r in fake_deepseek.requests] == ["planner"]
    assert "a - b" in (workspace / "app.py").read_text()
