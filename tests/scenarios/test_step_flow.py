"""The editor's flow (what the language server drives): plan → run_step (stage only) →
the editor applies accepted hunks and calls mark_applied → complete_step (verify, mark, recover)."""

from __future__ import annotations

from scenario_kit import diff, plan_json, states

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


async def test_step_by_step_with_editor_applying_hunks(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    sid, plan = await agent.plan("Fix add")
    step_id = plan.steps[0].step_id
    outcome = await agent.run_step(sid, step_id)
    assert outcome.status == "staged" and len(outcome.patch_ids) == 1
    assert outcome.state == "AwaitingApproval"
    assert "a - b" in (workspace / "app.py").read_text()  # nothing applied by run_step

    # The editor applies the hunk itself (workspace/applyEdit), then tells the patch store.
    ps = agent.patches.get(outcome.patch_ids[0])
    (workspace / "app.py").write_text((workspace / "app.py").read_text().replace("a - b", "a + b"))
    agent.patches.mark_applied(ps.patch_id, [h.hunk_id for h in ps.hunks])

    view = agent.session_view(sid)
    assert view["patches"][0]["applied"] == [h.hunk_id for h in ps.hunks]  # routed to the session by patch id
    done = await agent.complete_step(sid, step_id)
    assert done.state == "Completed" and done.status == "done"
    assert states(agent, sid) == ["Planning", "Paused", "ExecutingStep", "AwaitingApproval", "Verifying", "Completed"]
    why = agent.explain_routing(sid, step_id=step_id)
    assert why["profile"] == "fast" and why["decision_id"] == view["patches"][0]["decision_id"]


async def test_rejected_hunks_fail_the_step_and_pause(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    sid, plan = await agent.plan("Fix add")
    outcome = await agent.run_step(sid, plan.steps[0].step_id)
    agent.patches.reject(outcome.patch_ids[0])
    result = await agent.complete_step(sid, plan.steps[0].step_id)
    assert result.status == "failed" and result.state == "Paused"
    assert agent.session_view(sid)["plan"]["steps"][0]["status"] == "failed"


async def test_skip_step_and_scope_growth_revises_plan(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": plan_json(("Edit util", ["util.py"]), ("Other", ["app.py"]), verification=[])})
    # The executor wants to touch app.py in the util step: refused, the plan is revised.
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Edit util"},
                       "content": diff("app.py", ["    return a - b"], ["    return a + b"], start=6)})
    fake_deepseek.add({"match": {"role": "planner", "contains": "also needs these files"},
                       "content": plan_json(("Edit util", ["util.py", "app.py"]), ("Other", ["app.py"]), verification=[])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Edit util"},
                       "content": diff("app.py", ["    return a - b"], ["    return a + b"], start=6)})
    agent = make_agent()
    sid, plan = await agent.plan("Edit util")
    outcome = await agent.run_step(sid, plan.steps[0].step_id)
    view = agent.session_view(sid)
    assert view["plan"]["version"] == 2 and view["plan"]["steps"][0]["files"] == ["util.py", "app.py"]
    assert outcome.status == "staged"
    skipped = await agent.skip_step(sid, view["plan"]["steps"][1]["step_id"])
    assert agent.session_view(sid)["plan"]["steps"][1]["status"] == "skipped"
    assert skipped.state == "Paused"


async def test_no_edit_plan_completes_and_no_change_step_moves_on(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "contains": "Is add fine?"},
                       "content": "ARCHITECT_PLAN_V1\nNO_EDIT|true|nothing to change\nARCHITECT_PLAN_END"})
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Look", ["app.py"]), ("Fix", ["app.py"]), verification=[])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Look"}, "content": "NO_CHANGE|it is fine"})
    agent = make_agent()
    view = await agent.run("Is add fine?")
    assert view["state"] == "Completed" and view["plan"]["no_edit_reason"] == "nothing to change"
    sid, plan = await agent.plan("Look then fix")
    outcome = await agent.run_step(sid, plan.steps[0].step_id)
    assert outcome.status == "done" and outcome.state == "Paused" and outcome.next_step_id == plan.steps[1].step_id


async def test_state_listener_hears_every_transition_in_log_order(make_agent, fake_deepseek, workspace):
    """The agent pushes each transition to its listeners (what `deepseek/status` is sent from),
    once its event is logged: the same sequence as the log, nothing skipped or coalesced."""
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    heard = []
    logged_when_heard = []

    def listener(change):
        heard.append(change)
        # The event is durable before the listener runs.
        logged_when_heard.append(states(agent, change.session_id)[-1] == change.to_state)

    agent.on_state_change(lambda change: 1 / 0)  # a broken listener does not stop the session or the others
    remove = agent.on_state_change(listener)
    sid, plan = await agent.plan("Fix add")
    step_id = plan.steps[0].step_id
    outcome = await agent.run_step(sid, step_id)
    ps = agent.patches.get(outcome.patch_ids[0])
    (workspace / "app.py").write_text((workspace / "app.py").read_text().replace("a - b", "a + b"))
    agent.patches.mark_applied(ps.patch_id, [h.hunk_id for h in ps.hunks])
    await agent.complete_step(sid, step_id)

    assert [c.to_state for c in heard] == states(agent, sid)
    assert [c.from_state for c in heard] == ["Idle", *states(agent, sid)[:-1]]
    assert {c.session_id for c in heard} == {sid} and all(logged_when_heard)
    remove()
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
    await agent.plan("Fix add again")
    assert len(heard) == len(states(agent, sid))  # a removed listener hears nothing more
