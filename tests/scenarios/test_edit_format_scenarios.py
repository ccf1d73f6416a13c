"""The second edit format end to end: SEARCH/REPLACE blocks (asked for per model, or as the
automatic fallback after unified diffs failed twice) and whole-file answers become one PatchSet."""

from __future__ import annotations

from scenario_kit import APP, diff, plan_json, scenario_config

PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])
BLOCK = "app.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
WRONG_DIFF = diff("app.py", ["    return a * b"], ["    return a + b"], start=6)


async def test_editblock_format_is_asked_for_per_model_and_applied(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": BLOCK})
    cfg = scenario_config()
    cfg.agent_loop.edit_format_by_model = {"deepseek-v4-flash": "editblock"}
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    system = [r for r in fake_deepseek.requests if r.role == "executor"][0].body["messages"][0]["content"]
    assert "<<<<<<< SEARCH" in system and "unified diff" not in system


async def test_unified_diff_failing_twice_falls_back_to_editblocks(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Switch format now"}, "content": BLOCK})
    fake_deepseek.add({"match": {"role": "executor"}, "content": WRONG_DIFF, "repeat": True})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    assert len(executor) == 3
    assert "SEARCH/REPLACE" not in executor[1].body["messages"][-1]["content"]
    assert "<<<<<<< SEARCH" in executor[2].body["messages"][-1]["content"]


async def test_never_apply_a_search_text_that_is_not_unique(make_agent, fake_deepseek, workspace):
    (workspace / "app.py").write_text(APP + "\n\ndef sub(a, b):\n    return a - b\n")
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "ambiguous"},
                       "content": BLOCK.replace("    return a - b\n=", "def add(a, b):\n    return a - b\n=")
                                       .replace("=======\n    return a + b", "=======\ndef add(a, b):\n    return a + b")})
    fake_deepseek.add({"match": {"role": "executor"}, "content": BLOCK})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    text = (workspace / "app.py").read_text()
    assert "def add(a, b):\n    return a + b" in text and "def sub(a, b):\n    return a - b" in text


async def test_whole_file_answer_is_staged_as_a_diff(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fixed = APP.replace("a - b", "a + b")
    fake_deepseek.add({"match": {"role": "executor"}, "content": f"Here is the corrected file.\n\napp.py\n```python\n{fixed}```\n"})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == fixed


async def test_retry_resends_only_the_failed_hunk_with_a_did_you_mean_excerpt(make_agent, fake_deepseek, workspace):
    two = ("```diff\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return \"Hello \" + name\n"
           "+    return \"Hello, \" + name + \"!\"\n@@ -5,2 +5,2 @@\n def add(a, b):\n-    return a * b\n+    return a + b\n```")
    only_add = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix both", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Resend ONLY the failed hunks"}, "content": only_add})
    fake_deepseek.add({"match": {"role": "executor"}, "content": two})
    agent = make_agent()
    view = await agent.run("Fix greet and add")
    assert view["state"] == "Completed", view["last_error"]
    text = (workspace / "app.py").read_text()
    assert 'return "Hello, " + name + "!"' in text and "return a + b" in text
    retry = [r for r in fake_deepseek.requests if r.role == "executor"][1].body["messages"][-1]["content"]
    assert "hunk 2 of 2" in retry and "did you mean these lines of the file?" in retry and "    6 |     return a - b" in retry


async def test_registry_entry_edit_format_selects_editblock(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor"}, "content": BLOCK})
    cfg = scenario_config()
    cfg.models["deepseek-v4-flash"] = cfg.models["deepseek-v4-flash"].model_copy(update={"edit_format": "editblock"})
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    system = [r for r in fake_deepseek.requests if r.role == "executor"][0].body["messages"][0]["content"]
    assert "<<<<<<< SEARCH" in system


async def test_edit_tool_call_with_a_unique_old_string_is_staged(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "occurs 2 times"},
                       "tool_calls": [{"name": "edit_file", "arguments": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}}]})
    fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [
        {"name": "edit_file", "arguments": {"path": "app.py", "old_string": "return", "new_string": "yield"}}]})
    cfg = scenario_config()
    cfg.agent_loop.edit_format = "editblock"
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")
    first = [r for r in fake_deepseek.requests if r.role == "executor"][0].body
    assert "edit_file" in [t["function"]["name"] for t in first["tools"]]
