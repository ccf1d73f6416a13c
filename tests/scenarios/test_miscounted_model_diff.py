"""End to end: the model answers with the most common defect of real model diffs, hunk headers
whose counts are wrong (`@@ -5 +5 @@` over a body of 2 old and 3 new lines).
The real agent recounts them from the bodies, stages the change, and it applies exactly: the file
holds every line the model wrote and the tests pass. The fake DeepSeek over loopback."""

from __future__ import annotations

from scenario_kit import APP, ScriptedUI, plan_json

MISCOUNTED = """```diff
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return "Hello " + name
+    return "Hello, " + name + "!"
@@ -5 +5 @@
 def add(a, b):
-    return a - b
+    # the sum, not the difference
+    return a + b
```"""

FIXED = (APP.replace('return "Hello " + name', 'return "Hello, " + name + "!"')
         .replace("    return a - b", "    # the sum, not the difference\n    return a + b"))


async def test_a_diff_with_miscounted_hunk_headers_is_staged_and_applies(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix greet and add", ["app.py"]))})
    fake_deepseek.add({"match": {"role": "executor"}, "content": MISCOUNTED})
    ui = ScriptedUI(approvals=["allow_once"])
    agent = make_agent(ui)
    view = await agent.run("Fix greet and add")
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "app.py").read_text() == FIXED  # every line the model wrote, nothing lost
    assert [a.kind for a in ui.approvals] == ["patch.apply"]
    staged = agent.store.open(view["session_id"]).read()
    hunks = [h for e in staged if e.kind == "PatchStaged@v1" for h in e.payload.get("hunks", [])]
    assert [(h["old_lines"], h["new_lines"]) for h in hunks] == [(2, 2), (2, 3)]  # counted from the bodies
