"""End to end: a program the agent needs cannot run, and the model and the person are told so.

The model (the fake DeepSeek server over loopback) searches while planning; ripgrep is hidden by
the OS sandbox (bwrap's "execvp: No such file or directory" exits 1, which is rg's "no matches").
The planner's next prompt must carry "search failed: ...", not an empty match list. And a plan
whose verification program cannot run pauses for the person, instead of asking the model to fix
code that was never tested. (Each session is replayed afterwards by the `make_agent` fixture.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenario_kit import ScriptedUI, diff, plan_json, scenario_config

from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import search

SANDBOX = Sandbox(Path("/")).status()
ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


def _tool_message(request) -> dict:
    return json.loads(request.body["messages"][-1]["content"])


async def _plan_after_a_search(make_agent, fake_deepseek, config=None):
    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "fs_search_rg", "arguments": {"query": "def add"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": plan_json(("Fix add", ["app.py"]))})
    agent = make_agent(config=config)
    await agent.plan("Fix add")
    return _tool_message([r for r in fake_deepseek.requests if r.role == "planner"][1])


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
async def test_always_answers_search_failed_when_the_sandbox_hides_rg(make_agent, fake_deepseek, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    bundled = tmp_path / "venv-bin"  # where the `ripgrep` package put rg, beside our interpreter
    bundled.mkdir()
    (bundled / "rg").symlink_to(search.rg_binary())
    monkeypatch.setattr(search, "bundled_rg", lambda: bundled / "rg")
    config = scenario_config()
    config.policy.sandbox.masked_paths = [str(bundled)]  # the sandbox's view does not show it
    told = await _plan_after_a_search(make_agent, fake_deepseek, config)
    assert told.get("value") is None  # no match list at all, empty or not
    assert told["ok"] is False and told["error"].startswith("search failed: ")
    assert "sandbox hides" in told["error"] and "rg" in told["error"]


async def test_a_search_that_runs_still_answers_its_matches(make_agent, fake_deepseek):
    told = await _plan_after_a_search(make_agent, fake_deepseek)
    assert told["ok"] is True and told["value"]["matches"][0]["path"] == "app.py"


async def test_a_verification_that_cannot_run_pauses_for_the_person(make_agent, fake_deepseek, workspace,
                                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "checkit").write_text("#!/bin/sh\nexit 0\n")  # installed, but not executable
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    config = scenario_config()
    config.policy.allowlist = [*config.policy.allowlist, "checkit"]
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["checkit"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    ui = ScriptedUI(approvals=["allow_once"])
    agent = make_agent(ui, config=config)
    view = await agent.run("Fix add")
    assert view["state"] == "Paused"
    events = agent.store.open(view["session_id"]).read()
    last = [e.payload for e in events if e.kind == "SessionStateChanged@v1"][-1]
    assert "was not run" in last["reason"] and "is not executable" in last["reason"] and "chmod +x" in last["reason"]
    # Not the code's fault: no fix step, no second executor call, no failure for the classifier.
    assert [s["title"] for s in view["plan"]["steps"]] == ["Fix add"]
    assert [r.role for r in fake_deepseek.requests].count("executor") == 1
    runs = [e.payload for e in events if e.kind == "VerificationRun@v1"]
    assert len(runs) == 1 and runs[0]["exit_code"] is None and runs[0]["fingerprint"] is None
