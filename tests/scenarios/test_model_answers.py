"""No model answer ends in a traceback: wrong paths go back to the planner, diffs that only add
lines to a missing file create it, files the step did not declare revise the plan."""

from __future__ import annotations

from scenario_kit import diff, plan_json

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


async def test_plan_naming_a_missing_path_goes_back_to_the_planner(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "contains": "do not exist"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["src/app.py"]), verification=[])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "src/app.py"},
                       "content": diff("src/app.py", ["    return a - b"], ["    return a + b"], start=6)})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert "return a + b" in (workspace / "app.py").read_text()
    assert not (workspace / "src").exists()
    revision = [r for r in fake_deepseek.requests if r.role == "planner"][1].body["messages"]
    feedback = "\n".join(str(m.get("content")) for m in revision)
    assert "src/app.py" in feedback and "existing files with similar names: app.py" in feedback


async def test_diff_adding_lines_to_a_missing_file_creates_it(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Add helper", ["lib/helper.py"]), verification=["python -m pytest -q --co"])})
    body = "```diff\n--- a/lib/helper.py\n+++ b/lib/helper.py\n@@ -0,0 +1,2 @@\n+def helper():\n+    return 1\n```"
    fake_deepseek.add({"match": {"role": "executor"}, "content": body})
    agent = make_agent()
    view = await agent.run("Add a helper")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "lib" / "helper.py").read_text() == "def helper():\n    return 1\n"


async def test_diff_touching_an_undeclared_file_revises_the_plan(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner", "contains": "also needs"},
                       "content": plan_json(("Fix add", ["util.py", "app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["util.py"]), verification=[])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX, "repeat": True})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert "return a + b" in (workspace / "app.py").read_text()
    assert view["plan"]["steps"][0]["files"] == ["util.py", "app.py"]
