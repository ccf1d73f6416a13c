"""Hetun mode end to end against the fake DeepSeek server: research fan-out (fast), cross-check
(max-think), mission card, the person's decision, the approved run straight through, verification,
one-action undo; budgets stop the research with a clear message. Every session made here is
replayed by the `make_agent` fixture (and must reproduce exactly)."""

from __future__ import annotations

import pytest
from scenario_kit import ScriptedUI, diff, kinds, plan_json, scenario_config

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
COORDINATOR = "SLICE|app.py\nSLICE|util.py\nSLICE|tests/test_app.py\n"


def research_script(fake, *, coordinator: str = COORDINATOR, followup: bool = True) -> None:
    fake.add({"match": {"role": "hetun.coordinator"}, "content": coordinator})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: app.py"},
              "content": "FINDING|0.9|app.py:6 add() returns a - b instead of a + b\n"
                         + ("FOLLOWUP|symbol:double|see how helpers are written\n" if followup else "")})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: util.py"}, "content": "NOTHING"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: tests/test_app.py"},
              "content": "FINDING|0.7|tests/test_app.py:9 test_add expects add(2, 3) == 5\n"
                         "FINDING|0.2|test_add expects add(2, 3) == 5 in tests/test_app.py\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "Slice: symbol:double"},
              "content": "FINDING|0.3|util.py:1 double is a one-line helper\n"})
    fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|the code says so"})


def mission_script(fake) -> None:
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]),
                                                                verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor"}, "content": ADD_FIX})


def hetun_config():
    cfg = scenario_config()
    cfg.hetun.parallelism = 4
    return cfg


async def test_hetun_research_mission_approve_applies_and_verifies(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    ui = ScriptedUI(answers=["approve"])
    agent = make_agent(ui=ui, config=hetun_config())
    view = await agent.run("Fix add in app.py so the tests pass", mode="hetun")

    assert view["state"] == "Completed", view["state_reason"]
    assert "a + b" in (workspace / "app.py").read_text()
    research = view["hetun"]["research"]
    nodes = research["nodes"]
    by_kind = {k: [n for n in nodes if n["kind"] == k] for k in ("coordinator", "slice", "followup", "crosscheck")}
    assert [n["target"] for n in by_kind["slice"]] == ["app.py", "util.py", "tests/test_app.py"]
    assert [n["target"] for n in by_kind["followup"]] == ["symbol:double"]  # followed up on what was new
    assert by_kind["followup"][0]["parent_id"] == by_kind["slice"][0]["node_id"]
    test_findings = by_kind["slice"][2]["findings"]
    assert [f["novel"] for f in test_findings] == [True, False]  # the repeat is not new
    assert all(n["profile"] == "max_think" for n in by_kind["crosscheck"]) and len(by_kind["crosscheck"]) == 3
    assert research["stop_reason"] == "done" and research["subqueries"] == len(nodes)
    assert "add() returns a - b" in research["synthesis"] and "confirmed" in research["synthesis"]
    # The sub-queries went to the fast profile, the cross-checks to max-think.
    calls = [e.payload for e in agent.store.open(view["session_id"]).read() if e.kind == "LLMCall@v1"]
    assert {c["profile"] for c in calls if c["role"] == "hetun.sub"} == {"fast"}
    assert {c["profile"] for c in calls if c["role"] == "hetun.crosscheck"} == {"max_think"}
    # One mission question, no per-hunk approval; a checkpoint before the first write.
    assert len(ui.questions) == 1 and "# Mission v1" in ui.questions[0] and "app.py" in ui.questions[0]
    assert ui.approvals == []
    mission = view["hetun"]["mission"]
    assert mission["files"] == [{"path": "app.py", "actions": ["step 1: Fix add"]}]
    assert mission["estimate"]["model_calls"] == 1 and mission["estimate"]["tokens"] > 0
    assert mission["verification"] == ["python -m pytest -q -k add"]
    ks = kinds(agent, view["session_id"])
    assert ks.index("MissionCheckpoint@v1") < ks.index("PatchApplied@v1")
    assert ks.index("MissionDecided@v1") < ks.index("MissionCheckpoint@v1")

    # One action undoes the whole mission.
    undone = await agent.undo_mission(view["session_id"])
    assert (undone.restored, undone.kept, undone.via) == (["app.py"], [], "disk")
    assert "a - b" in (workspace / "app.py").read_text()


async def test_hetun_task_level_approval_holds_with_approval_mode_auto(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    cfg = hetun_config()
    cfg.policy.approval_mode = "auto"
    ui = ScriptedUI(answers=[None])  # the person walks away from the mission card
    agent = make_agent(ui=ui, config=cfg)
    view = await agent.run("Fix add in app.py", mode="hetun")
    assert len(ui.questions) == 1 and "Approve this mission?" in ui.questions[0]
    assert view["state"] == "Paused" and view["hetun"]["decision"] is None
    assert "a - b" in (workspace / "app.py").read_text()  # nothing ran without the mission's approval


async def test_hetun_reject_changes_nothing(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=hetun_config())
    view = await agent.run("Fix add in app.py", mode="hetun")
    assert view["state"] == "Paused" and "mission rejected" in view["state_reason"]
    assert view["hetun"]["decision"] == "reject"
    assert "a - b" in (workspace / "app.py").read_text()
    assert "PatchStaged@v1" not in kinds(agent, view["session_id"])


async def test_hetun_modify_replans_with_the_edited_mission_then_approve(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"},
                       "content": plan_json(("Fix add", ["app.py"]), ("Fix greet", ["app.py"]), verification=[])})
    fake_deepseek.add({"match": {"role": "planner", "contains": "modified the mission"},
                       "content": plan_json(("Fix add only", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(answers=["modify", "Fix add only; leave greet alone", "approve"])
    agent = make_agent(ui=ui, config=hetun_config())
    view = await agent.run("Fix the bugs in app.py", mode="hetun")
    assert view["state"] == "Completed", view["state_reason"]
    mission = view["hetun"]["mission"]
    assert mission["version"] == 2 and mission["text"] == "Fix add only; leave greet alone"
    assert [s["title"] for s in view["plan"]["steps"]] == ["Fix add only"]
    assert "# Mission v2" in ui.questions[-1]
    assert "a + b" in (workspace / "app.py").read_text()


async def test_hetun_budget_stops_research_with_a_clear_message(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    cfg = hetun_config()
    cfg.hetun.max_subqueries = 3  # the coordinator and two slices
    ui = ScriptedUI(answers=["reject"])
    agent = make_agent(ui=ui, config=cfg)
    view = await agent.run("Fix add in app.py", mode="hetun")
    research = view["hetun"]["research"]
    assert research["subqueries"] == 3 and research["budget_hit"] == "max_subqueries"
    assert "Hetun research stopped" in research["message"] and "hetun.max_subqueries" in research["message"]
    assert [n["target"] for n in research["nodes"] if n["kind"] == "slice"] == ["app.py", "util.py"]
    assert any("Hetun research stopped" in text for _, text in ui.streamed)
    assert any("hetun.max_subqueries" in r for r in view["hetun"]["mission"]["risks"])


async def test_hetun_token_budget_stops_before_the_next_wave(make_agent, fake_deepseek, workspace):
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    cfg = hetun_config()
    cfg.hetun.max_tokens = 1  # the coordinator's answer already spends it
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=cfg)
    view = await agent.run("Fix add in app.py", mode="hetun")
    research = view["hetun"]["research"]
    assert research["budget_hit"] == "max_tokens" and research["subqueries"] == 1
    assert "hetun.max_tokens" in research["message"]


async def test_hetun_helper_block_runs_sandboxed_with_helpers_served_by_the_parent(make_agent, fake_deepseek, workspace):
    block = (
        "SLICE|app.py\n```python\n"
        "text = read_file('app.py')\n"
        "defs = filter(lambda l: l.startswith('def '), lines(text))\n"
        "answer = ask_fast('which of these is suspicious?', join(defs))\n"
        "finding('defs: ' + join(defs, ', '), 0.4)\n"
        "result({'defs': len(defs), 'answer': answer})\n```\n"
    )
    research_script(fake_deepseek, coordinator=block, followup=False)
    fake_deepseek.add({"match": {"role": "hetun.helper", "contains": "def add(a, b):"}, "content": "add looks wrong"})
    mission_script(fake_deepseek)
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=hetun_config())
    view = await agent.run("Fix add in app.py", mode="hetun")
    helper = next(n for n in view["hetun"]["research"]["nodes"] if n["kind"] == "helper")
    assert helper["status"] == "ok", helper["error"]
    texts = [f["text"] for f in helper["findings"]]
    assert "defs: def greet(name):, def add(a, b):" in texts
    assert any("'defs': 2" in t and "add looks wrong" in t for t in texts)
    assert helper["calls"] == 2


async def test_no_leak_helper_block_cannot_read_secret_files(make_agent, fake_deepseek, workspace):
    (workspace / ".env").write_text("API_TOKEN=sk-live-abcdef0123456789abcdef\n")
    block = "```python\ntry_it = read_file('.env')\nresult(try_it)\n```\n"
    research_script(fake_deepseek, coordinator=block + COORDINATOR, followup=False)
    mission_script(fake_deepseek)
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=hetun_config())
    view = await agent.run("Fix add in app.py", mode="hetun")
    helper = next(n for n in view["hetun"]["research"]["nodes"] if n["kind"] == "helper")
    assert helper["status"] == "error" and "read_file" in helper["error"]
    log = agent.store.log_path(view["session_id"]).read_text()
    assert "sk-live-abcdef0123456789abcdef" not in log
    for request in fake_deepseek.requests:
        assert "sk-live-abcdef0123456789abcdef" not in str(request)


async def test_hetun_steps_wait_for_the_mission(make_agent, fake_deepseek, workspace):
    import pytest

    from deepseek_ls.agent.hetun.driver import MissionNotApproved

    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    agent = make_agent(config=hetun_config())
    sid, plan = await agent.plan("Fix add in app.py", mode="hetun")
    assert agent.session_view(sid)["state"] == "Paused"
    with pytest.raises(MissionNotApproved):
        await agent.run_step(sid, plan.steps[0].step_id)
    view = await agent.decide_mission(sid, "approve")
    assert view["state"] == "Completed" and "a + b" in (workspace / "app.py").read_text()


@pytest.mark.parametrize("max_seconds, stopped", [
    pytest.param(25.0, True, id="over-before-the-followup-wave"),
    pytest.param(1000.0, False, id="within-the-budget"),
])
async def test_hetun_wall_time_budget_on_a_controlled_clock(make_agent, fake_deepseek, workspace, max_seconds, stopped):
    """Wall time is read from the agent's clock: here each model call the server answered is ten
    seconds, so no test sleeps. Checks come before each wave: 0 s (coordinator), 10 s (slices),
    40 s (the follow-up wave) — 25 s stops there, 1000 s never."""
    research_script(fake_deepseek)
    mission_script(fake_deepseek)
    cfg = hetun_config()
    cfg.hetun.max_seconds = max_seconds
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=cfg, clock=lambda: 10.0 * len(fake_deepseek.requests))
    view = await agent.run("Fix add in app.py", mode="hetun")
    research = view["hetun"]["research"]
    node_kinds = [n["kind"] for n in research["nodes"]]
    checks = [e.payload["value"]["over"] for e in agent.store.open(view["session_id"]).read()
              if e.kind == "ToolResult@v1" and e.payload["tool"] == "agent.clock"]
    if stopped:
        assert research["budget_hit"] == "max_seconds" and research["subqueries"] == 4
        assert "hetun.max_seconds" in research["message"] and "25s" in research["message"]
        assert "followup" not in node_kinds and "crosscheck" not in node_kinds
        assert checks == [False, False, True]
        assert any("hetun.max_seconds" in r for r in view["hetun"]["mission"]["risks"])
    else:
        assert research["budget_hit"] is None and research["stop_reason"] == "done"
        assert "followup" in node_kinds and "crosscheck" in node_kinds
        assert checks and not any(checks)


UTIL_FIX = "--- a/util.py\n+++ b/util.py\n@@ -2,1 +2,1 @@\n-    return x * 2\n+    return x + x\n"
APP_FIX = "--- a/app.py\n+++ b/app.py\n@@ -6,1 +6,1 @@\n-    return a - b\n+    return a + b\n"


def grown_scope_script(fake) -> None:
    """The mission is app.py; the executor finds it needs util.py too, the plan is revised to declare
    it, and the patch then touches a file the person never approved."""
    research_script(fake, followup=False)
    fake.add({"match": {"role": "planner", "contains": "also needs these files"},
              "content": plan_json(("Fix add", ["app.py", "util.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]),
                                                                verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor"}, "content": "NEED_FILE|util.py|add should use the helpers"})
    fake.add({"match": {"role": "executor"}, "content": "```diff\n" + APP_FIX + UTIL_FIX + "```"})


async def test_no_unapproved_exec_mission_scope_growth_denied_changes_nothing(make_agent, fake_deepseek, workspace):
    grown_scope_script(fake_deepseek)
    before = {p: (workspace / p).read_text() for p in ("app.py", "util.py")}
    ui = ScriptedUI(approvals=["deny"], answers=["approve"])
    agent = make_agent(ui=ui, config=hetun_config())
    view = await agent.run("Fix add in app.py", mode="hetun")
    assert [a.kind for a in ui.approvals] == ["scope.grow"]  # asked explicitly, once
    assert ui.approvals[0].files == ["app.py", "util.py"] and "util.py is not in the approved mission" in ui.approvals[0].title
    assert view["state"] == "Paused" and "denied" in view["state_reason"]
    assert {p: (workspace / p).read_text() for p in before} == before  # nothing of the patch was written
    assert "PatchApplied@v1" not in kinds(agent, view["session_id"])


async def test_hetun_mission_scope_growth_approved_applies_with_the_new_file(make_agent, fake_deepseek, workspace):
    grown_scope_script(fake_deepseek)
    ui = ScriptedUI(approvals=["allow_once"], answers=["approve"])
    agent = make_agent(ui=ui, config=hetun_config())
    view = await agent.run("Fix add in app.py", mode="hetun")
    assert [a.kind for a in ui.approvals] == ["scope.grow"]
    assert view["state"] == "Completed", view["state_reason"]
    assert "a + b" in (workspace / "app.py").read_text() and "x + x" in (workspace / "util.py").read_text()
    decisions = [e.payload for e in agent.store.open(view["session_id"]).read() if e.kind == "PolicyDecision@v1"
                 and e.payload.get("rule") == "mission"]
    assert decisions and "util.py" in decisions[-1]["subject"]
