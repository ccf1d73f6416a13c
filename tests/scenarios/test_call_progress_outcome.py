"""A model call's progress ends with what happened to it: "done" for an answer, "failed" for an
error, "cancelled" when its session was stopped — never "done" for a call that gave nothing.

Before, every call ended as "executor: done (0.1s)" whatever became of it, so a lane whose call
failed looked, on the terminal and in the editor's `$/progress`, like a lane that got its answer.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from deepseek_ls.llm.capacity import CALL_WATCHER
from scenario_kit import ScriptedUI, diff, plan_json, scenario_config

FIX_ADD = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)
TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])
BAD_REQUEST = {"status": 400, "body": "the request was refused"}


class ProgressUI(ScriptedUI):
    """Records every progress report: (token, message, done)."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[tuple[str, str, bool]] = []

    def progress(self, token, message, percentage=None, *, done=False) -> None:
        self.reports.append((token, message, done))

    def ends(self) -> list[str]:
        return [message for _, message, done in self.reports if done]


@pytest.fixture
def repo(workspace: Path) -> Path:
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "base")):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=workspace, check=True,
                       capture_output=True)
    return workspace


async def test_a_failed_model_call_ends_its_progress_as_failed_not_done(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "fault": BAD_REQUEST})
    ui = ProgressUI()
    agent = make_agent(ui=ui)
    with pytest.raises(Exception):
        await agent.run("Fix add")
    assert ui.ends() == ["planner: failed"]


async def test_a_lane_whose_call_failed_ends_failed_and_its_step_runs_in_the_workspace(make_agent, fake_deepseek,
                                                                                       repo):
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]),
                                            verification=["git status"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "fault": BAD_REQUEST})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    cfg = scenario_config()
    cfg.agent_loop.teammate_mode = True
    ui = ProgressUI()
    agent = make_agent(ui=ui, config=cfg)
    view = await agent.run("Fix add and add triple")
    assert view["state"] == "Completed", view["state_reason"]

    failed_lane = [t for t, m, done in ui.reports if done and m.endswith("executor: failed")]
    assert len(failed_lane) == 1 and failed_lane[0].endswith("-lane1"), ui.reports
    assert not [m for t, m, done in ui.reports if t == failed_lane[0] and done and m.endswith(": done")]
    statuses = [text for channel, text in ui.streamed if channel == "status"]
    assert any(s.startswith("lane for step 'Fix add' failed: the API rejected the request as bad request (400)") for s in statuses), statuses
    assert not any(s.startswith("lane 1: step 'Fix add' done") for s in statuses), statuses
    log = agent.store.open(view["session_id"]).read()
    assert [e.payload["step_id"] for e in log if e.kind == "LaneFailed@v1"] == [view["plan"]["steps"][0]["step_id"]]
    assert "return a + b" in (repo / "app.py").read_text()  # the step ran again, in the workspace


async def test_a_call_cancelled_while_the_server_holds_it_ends_as_cancelled(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": "never sent", "fault": {"hold": "planner"}})
    ui = ProgressUI()
    agent = make_agent(ui=ui)
    run = asyncio.ensure_future(agent.run("Fix add"))
    try:
        while not fake_deepseek.requests:  # the call is at the server, held there
            await asyncio.sleep(0.01)
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    finally:
        fake_deepseek.release("planner")
    assert ui.ends() == ["planner: cancelled"]
    assert CALL_WATCHER.get() is None
