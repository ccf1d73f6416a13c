"""Headless Neovim drives the whole plan → step → hunks → accept/reject flow
against the real deepseek-ls, with the model served by the fake DeepSeek
server running as its own process."""

import json

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


def test_plan_run_step_accept_one_hunk_reject_the_other(nvim, workspace, fake_model):
    fake, env = fake_model
    result = nvim.run("flow_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    requests = fake.requests()
    roles = [r["role"] for r in requests]
    assert roles.count("planner") == 2, f"plan + revision: {roles}"
    assert "executor" in roles, roles
    planner_text = json.dumps(next(r["body"] for r in requests if r["role"] == "planner"))
    assert "File: app.py (lines 1-2)" in planner_text, "the :1,2 range reached the planner as context"
    # The spec saved the buffer: the accepted hunk is on disk, the rejected one is not.
    assert (workspace / "app.py").read_text() == (
        "def greet(name):\n    return f'hello {name}'\n\n\ndef add(a, b):\n    return a + b\n"
    )


def test_accepting_over_a_conflicting_user_edit_keeps_the_users_text(nvim, workspace, fake_model):
    _, env = fake_model
    result = nvim.run("conflict_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    assert "return a + b" in (workspace / "app.py").read_text(), "nothing was written to disk"


def test_never_clobber_undo_of_a_shell_apply_keeps_what_was_typed_in_the_buffer(nvim, workspace, fake_model):
    _, env = fake_model
    (workspace / "fix.diff").write_text(
        "--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def add(a, b):\n-    return a + b\n+    return int(a) + int(b)\n"
    )
    result = nvim.run("undo_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    assert "int(a) + int(b)" in (workspace / "app.py").read_text(), "the undo was left in the buffer, not written under it"
