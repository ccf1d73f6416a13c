"""Headless Neovim: :DeepSeekTeammate on, then running the first step of a plan with two
independent steps runs both in lanes (real git worktrees, the fake DeepSeek process)."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.nvim

PLAN = {"goal": "two independent edits", "assumptions": [], "risk_notes": [], "confidence": 0.9,
        "verification": ["git status"],
        "steps": [{"title": "Edit greet in app.py", "intent": "edit", "files": ["app.py"]},
                  {"title": "Edit util", "intent": "edit", "files": ["util.py"]}]}
GREET = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def greet(name):\n-    return 'hello ' + name\n+    return f'hello {name}'\n"
UTIL = "--- a/util.py\n+++ b/util.py\n@@ -1,1 +1,1 @@\n-X = 1\n+X = 2\n"


def test_teammate_lanes_from_neovim(nvim, workspace, fake_deepseek_process):
    (workspace / "util.py").write_text("X = 1\n")
    for args in (["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True)
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"},
        {"match": {"role": "executor", "contains": "Step: Edit greet"}, "content": "```diff\n" + GREET + "```"},
        {"match": {"role": "executor", "contains": "Step: Edit util"}, "content": "```diff\n" + UTIL + "```"},
    ])
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    result = nvim.run("lanes_spec.lua", cwd=workspace, env=env, timeout=200)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    assert (workspace / "util.py").read_text() == "X = 1\n"  # staged for review, not written
    branches = subprocess.run(["git", "branch", "--list", "lane/*"], cwd=workspace, capture_output=True, text=True)
    assert branches.stdout.strip() == ""
