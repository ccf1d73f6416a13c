"""seeds/001 section 11: single-file edit, multi-file edit, patch apply failure recovers,
verification failure recovers — each through the real agent, fake DeepSeek over loopback."""

from __future__ import annotations

from conftest import ScriptedUI, diff, kinds, plan_json, states

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
