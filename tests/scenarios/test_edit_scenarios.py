"""Edit scenarios: single-file edit, multi-file edit, patch apply failure recovers,
verification failure recovers — each through the real agent, fake DeepSeek over loopback."""

from __future__ import annotations

import pytest

from scenario_kit import ScriptedUI, diff, kinds, plan_json, states

GREET_FIX = diff("app.py", ['    return "Hello " + name'], ['    return "Hello, " + name + "!"'], start=2)
ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
BOTH_FIX = diff(
    "app.py",
    ['    return "Hello " + name', "", "", "def add(a, b):", "    return a - b"],
    ['    return "Hello, " + name + "!"', "", "", "def add(a, b):", "    return a + b"],
    start=2,
)


async def test_single_file_edit_succeeds(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix greet and add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor"}, "content": BOTH_FIX})
    ui = ScriptedUI()
    agent = make_agent(ui)
    view = await agent.run("Make the tests pass")
    assert view["state"] == "Completed", view["last_error"]
    assert '"Hello, " + name + "!"' in (workspace / "app.py").read_text()
    assert [a.kind for a in ui.approvals] == ["patch.apply"]
    sid = view["session_id"]
    assert states(agent, sid) == ["Planning", "ExecutingStep", "AwaitingApproval", "Verifying", "Completed"]
    ks = kinds(agent, sid)
    for kind in ("PlanCreated@v1", "RouterDecision@v1", "LLMCall@v1", "PatchStaged@v1", "PatchApplied@v1", "VerificationRun@v1"):
        assert kind in ks
    assert view["plan"]["steps"][0]["status"] == "done"
    assert view["patches"][0]["step_id"] == view["plan"]["steps"][0]["step_id"]
    assert view["patches"][0]["profile"] == "fast"


async def test_multi_file_edit_succeeds(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix app", ["app.py"]), ("Triple helper", ["util.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix app"}, "content": BOTH_FIX})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Triple helper"},
                       "content": diff("util.py", ["def double(x):", "    return x * 2"],
                                       ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])})
    agent = make_agent()
    view = await agent.run("Fix app and add triple to util")
    assert view["state"] == "Completed", view["last_error"]
    assert "def triple(x):" in (workspace / "util.py").read_text()
    assert "a + b" in (workspace / "app.py").read_text()
    assert [s["status"] for s in view["plan"]["steps"]] == ["done", "done"]
    by_step = {p["step_id"]: p["files"] for p in view["patches"]}
    assert sorted(by_step.values()) == [["app.py"], ["util.py"]]
    assert states(agent, view["session_id"]).count("Verifying") == 1  # verified once, after the last step


async def test_patch_apply_failure_recovers(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    # First answer's context does not exist in the file: staging fails, the executor gets the error back.
    fake_deepseek.add({"match": {"role": "executor"}, "content": diff("app.py", ["    return a * b"], ["    return a + b"], start=6)})
    fake_deepseek.add({"match": {"role": "executor", "contains": "could not be staged"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert "return a + b" in (workspace / "app.py").read_text()
    events = agent.store.open(view["session_id"]).read()
    classes = [e.payload["failure_class"] for e in events if e.kind == "FailureClassified@v1"]
    assert classes == ["PatchMismatch"]
    executor_requests = [r for r in fake_deepseek.requests if r.role == "executor"]
    assert len(executor_requests) == 2


async def test_verification_failure_recovers(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix greet", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix greet"}, "content": GREET_FIX})
    # test_add still fails: a mechanical failure, handled by a local fix step for the executor.
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix:"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Make greet polite")
    assert view["state"] == "Completed", view["last_error"]
    text = (workspace / "app.py").read_text()
    assert '"Hello, " + name + "!"' in text and "return a + b" in text
    events = agent.store.open(view["session_id"]).read()
    runs = [e.payload["ok"] for e in events if e.kind == "VerificationRun@v1"]
    assert runs == [False, True]
    assert [e.payload["failure_class"] for e in events if e.kind == "FailureClassified@v1"] == ["MechanicalVerifyFailure"]
    assert view["plan"]["version"] == 2 and view["plan"]["steps"][-1]["intent"] == "fix"
    fix_request = [r for r in fake_deepseek.requests if "Step: Fix:" in json_text(r)][0]
    assert "test_add" in json_text(fix_request)  # the failing output went back to the executor


def json_text(request) -> str:
    import json

    return json.dumps(request.body)


async def test_repeated_verification_failure_goes_back_to_the_planner_on_max_think(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": plan_json(("Fix greet", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix greet"}, "content": GREET_FIX})
    # The local fix attempt changes nothing that matters: the same failure again → RepeatedVerifyFailure.
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix:"},
                       "content": diff("app.py", ["def greet(name):"], ["# greeting helpers", "def greet(name):"])})
    fake_deepseek.add({"match": {"role": "planner", "contains": "RepeatedVerifyFailure"},
                       "content": plan_json(("Fix greet", ["app.py"]), ("Fix add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"},
                       "content": diff("app.py", ["    return a - b"], ["    return a + b"], start=7)})
    agent = make_agent()
    view = await agent.run("Make greet polite")
    assert view["state"] == "Completed", view["last_error"]
    events = agent.store.open(view["session_id"]).read()
    classes = [e.payload["failure_class"] for e in events if e.kind == "FailureClassified@v1"]
    assert classes == ["MechanicalVerifyFailure", "RepeatedVerifyFailure"]
    recovery = [d for d in view["decisions"] if d["unit"].startswith("planner:recover")]
    assert recovery and recovery[0]["profile"] == "max_think" and "REPEATED_FAILURE" in recovery[0]["reason_codes"]
    assert agent.explain_routing(view["session_id"], recovery[0]["decision_id"])["text"].startswith("max-think: RepeatedVerifyFailure")
    assert [r.body["model"] for r in fake_deepseek.requests if r.role == "planner"] == ["deepseek-v4-flash", "deepseek-v4-pro"]
    assert [s["title"] for s in view["plan"]["steps"]] == ["Fix greet", "Fix add"]
    assert [s["status"] for s in view["plan"]["steps"]] == ["done", "done"]


async def test_loop_stops_when_iterations_are_spent_and_says_why(make_agent, fake_deepseek, workspace):
    from scenario_kit import scenario_config

    from deepseek_ls.agent import AgentFailure

    cfg = scenario_config()
    cfg.agent_loop.max_iterations = 3
    cfg.router.auto_max_think = False
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor"}, "repeat": True,
                       "content": diff("app.py", ["    return a * b"], ["    return a + b"], start=6)})
    agent = make_agent(config=cfg)
    with pytest.raises(AgentFailure, match=r"stopped after 3 failed attempts \(agent_loop.max_iterations = 3\)"):
        await agent.run("Fix add")
    sid = agent.store.list()[0].session_id
    view = agent.session_view(sid)
    assert view["state"] == "Failed" and "could not be staged" in view["last_error"]
    assert "a - b" in (workspace / "app.py").read_text()


async def test_planner_reads_with_tools_and_executor_asks_for_context(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "fs_read", "arguments": {"path": "app.py"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool", "last_contains": "return a - b"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": "NEED_CONTEXT|util.py:1-2"})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Requested context"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    context_request = [r for r in fake_deepseek.requests if r.role == "executor"][1]
    assert "util.py lines 1-2" in context_request.body["messages"][-1]["content"]
    planner_tools = [t["function"]["name"] for t in fake_deepseek.requests[0].body["tools"]]
    assert "fs_read" in planner_tools and "patch_stage" not in planner_tools  # read-only while planning
    events = agent.store.open(view["session_id"]).read()
    assert any(e.kind == "ToolResult@v1" and e.payload["tool"] == "fs.read" and e.payload["ok"] for e in events)


async def test_denied_change_pauses_and_run_session_retries_the_step(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX, "repeat": True})
    ui = ScriptedUI(approvals=["deny", "allow_once"])
    agent = make_agent(ui)
    view = await agent.run("Fix add")
    assert view["state"] == "Paused" and view["plan"]["steps"][0]["status"] == "failed"
    assert "a - b" in (workspace / "app.py").read_text()
    assert view["patches"][0]["rejected"] and not view["patches"][0]["applied"]
    again = await agent.run(session_id=view["session_id"])
    assert again["state"] == "Completed", again["last_error"]
    assert "return a + b" in (workspace / "app.py").read_text()
    assert len(ui.approvals) == 2


async def test_executor_stages_through_the_patch_stage_tool(make_agent, fake_deepseek, workspace):
    raw = "--- a/app.py\n+++ b/app.py\n@@ -6,1 +6,1 @@\n-    return a - b\n+    return a + b\n"
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "patch_stage", "arguments": {"diff": raw}}]})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert "return a + b" in (workspace / "app.py").read_text()
    assert len([r for r in fake_deepseek.requests if r.role == "executor"]) == 1
    assert view["patches"][0]["step_id"] == view["plan"]["steps"][0]["step_id"]


async def test_approval_mode_never_keeps_the_patch_staged_and_an_outside_apply_is_picked_up(make_agent, fake_deepseek, workspace):
    from scenario_kit import scenario_config

    cfg = scenario_config()
    cfg.policy.approval_mode = "never"
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add")
    assert view["state"] == "Paused" and "applying is off by policy" in agent.store.open(view["session_id"]).read()[-1].payload["reason"]
    patch_id = view["patches"][0]["patch_id"]
    assert agent.patches.get(patch_id).hunks[0].status == "pending"

    # `deepseek-ls apply` (another process, no session sink) applies it; a fresh agent resumes and verifies.
    from deepseek_ls.patch import PatchStore
    from deepseek_ls.policy import PathPolicy

    PatchStore(workspace, agent.state_dir, policy=PathPolicy(workspace)).apply(patch_id)
    fresh = make_agent(config=cfg)
    done = await fresh.run(session_id=view["session_id"])
    assert done["state"] == "Completed", done["last_error"]
    assert done["patches"][0]["applied"] and "return a + b" in (workspace / "app.py").read_text()


async def test_design_mismatch_after_a_replan_goes_back_to_the_planner_again(make_agent, fake_deepseek, workspace):
    comment = lambda text: diff("app.py", ["def greet(name):"], [f"# {text}", "def greet(name):"])  # noqa: E731
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": plan_json(("Fix greet", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix greet"}, "content": GREET_FIX})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix:"}, "content": comment("first try")})
    fake_deepseek.add({"match": {"role": "planner", "contains": "RepeatedVerifyFailure"},
                       "content": plan_json(("Fix greet", ["app.py"]), ("Rework add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Rework add"}, "content": comment("second try")})
    fake_deepseek.add({"match": {"role": "planner", "contains": "DesignMismatch"},
                       "content": plan_json(("Fix greet", ["app.py"]), ("Fix add properly", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add properly"},
                       "content": diff("app.py", ["    return a - b"], ["    return a + b"], start=8)})
    agent = make_agent()
    view = await agent.run("Make greet polite")
    assert view["state"] == "Completed", view["last_error"]
    events = agent.store.open(view["session_id"]).read()
    classes = [e.payload["failure_class"] for e in events if e.kind == "FailureClassified@v1"]
    assert classes == ["MechanicalVerifyFailure", "RepeatedVerifyFailure", "DesignMismatch"]
    assert view["plan"]["version"] == 4 and [s["status"] for s in view["plan"]["steps"]] == ["done", "done"]
