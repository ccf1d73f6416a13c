"""Headless Neovim drives the whole plan → step → hunks → accept/reject flow
against the real deepseek-ls, with the model served by the fake DeepSeek
server running as its own process."""

import json

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

PLAN = {
    "goal": "Use an f-string in greet and convert add's arguments",
    "assumptions": ["app.py is the only file involved"],
    "steps": [
        {
            "title": "Edit greet and add in app.py",
            "intent": "edit",
            "tools": ["fs.read"],
            "files": ["app.py"],
        }
    ],
    "verification": [],
    "risk_notes": [],
    "confidence": 0.9,
}

# Two separate hunks (one context line each) so they can be decided one by one.
DIFF = """\
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a + b
+    return int(a) + int(b)
"""

SCRIPT = [
    {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN, indent=2) + "\n```"},
    {"match": {"role": "executor"}, "content": "```diff\n" + DIFF + "```"},
    {"match": {"role": "ask"}, "content": "greet returns a greeting: 'hello ' followed by the name."},
]


def test_plan_run_step_accept_one_hunk_reject_the_other(nvim, workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process(SCRIPT)
    result = nvim.run(
        "flow_spec.lua",
        cwd=workspace,
        env={"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"},
        timeout=240,
    )
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    roles = [r["role"] for r in fake.requests()]
    assert "planner" in roles and "executor" in roles, roles
    assert (workspace / "app.py").read_text().count("return a + b") == 1, "disk untouched until the user saves"
