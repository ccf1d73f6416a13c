"""End to end: the model plans a formatter in write mode as verification (`ruff format`, which the
person allowlisted). The real agent asks before running it, like an edit: "no" leaves every file as
it was (only the reviewed patch landed), "yes" formats. A plain `ruff check` still runs unprompted,
and a repository's `fix = true` cannot turn it into a write. The fake DeepSeek over loopback; ruff
for real, inside the sandbox."""

from __future__ import annotations

import pytest
from scenario_kit import APP, ScriptedUI, diff, plan_json, scenario_config

from deepseek_ls.agent.runtime import AgentFailure
from deepseek_ls.policy.sandbox import Sandbox

pytest.importorskip("ruff", reason="the test extras install ruff (pip install -e .[test])")

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
UNFORMATTED = "x = {  'a':1 }\n"
UNUSED_IMPORT = "import os\n\n\ndef f():\n    return 1\n"


def config_with(*allowed: str):
    cfg = scenario_config()
    cfg.policy.allowlist = [*cfg.policy.allowlist, *allowed]
    return cfg


def runs(agent, session_id: str) -> list[dict]:
    return [e.payload for e in agent.store.open(session_id).read() if e.kind == "VerificationRun@v1"]


async def test_never_write_unreviewed_a_formatter_the_person_declines(make_agent, fake_deepseek, workspace):
    (workspace / "style.py").write_text(UNFORMATTED)
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["ruff format"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(approvals=["allow_once", "deny"])  # the patch yes, the formatter no
    agent = make_agent(ui, config_with("ruff format"))
    view = await agent.run("Fix add")
    asked = [a for a in ui.approvals if a.kind == "bash.run"]
    assert [a.command for a in asked] == ["ruff format"]
    assert "rewrites files in place" in asked[0].detail and "without a patch to review" in asked[0].detail
    assert (workspace / "style.py").read_text() == UNFORMATTED  # nothing rewrote it
    assert (workspace / "app.py").read_text() == APP.replace("a - b", "a + b")  # the reviewed patch, nothing else
    assert view["state"] == "Paused"
    (run,) = runs(agent, view["session_id"])
    assert run["exit_code"] is None and "not approved" in run["output"]


async def test_a_formatter_the_person_approves_formats(make_agent, fake_deepseek, workspace):
    if not Sandbox(workspace).status().available:
        pytest.skip("no sandbox here: verification asks for other reasons too")
    (workspace / "style.py").write_text(UNFORMATTED)
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["ruff format"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(approvals=["allow_once", "allow_once"])
    agent = make_agent(ui, config_with("ruff format"))
    view = await agent.run("Fix add")
    assert [a.command for a in ui.approvals if a.kind == "bash.run"] == ["ruff format"]
    assert view["state"] == "Completed", view["last_error"]
    assert (workspace / "style.py").read_text() == 'x = {"a": 1}\n'


async def test_a_plain_ruff_check_runs_unprompted_and_never_fixes(make_agent, fake_deepseek, workspace):
    """`[tool.ruff] fix = true` makes `ruff check` fix files; the check runs with `--no-fix`."""
    if not Sandbox(workspace).status().available:
        pytest.skip("no sandbox here: verification would ask")
    (workspace / "pyproject.toml").write_text("[tool.ruff]\nfix = true\n")
    (workspace / "lint.py").write_text(UNUSED_IMPORT)
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["ruff check"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(approvals=["allow_once"])
    cfg = scenario_config()
    cfg.agent_loop.max_iterations = 1  # the lint failure is not sent back to the model
    agent = make_agent(ui, cfg)
    with pytest.raises(AgentFailure, match="`ruff check` failed"):  # the unused import: reported, not fixed
        await agent.run("Fix add")
    assert [a.kind for a in ui.approvals] == ["patch.apply"]  # the check ran without a prompt
    assert (workspace / "lint.py").read_text() == UNUSED_IMPORT  # and fixed nothing
    (session,) = agent.store.list()
    (run,) = runs(agent, session.session_id)
    assert run["exit_code"] == 1 and "F401" in run["output"], run
