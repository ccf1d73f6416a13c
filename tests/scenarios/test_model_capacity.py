"""One model manager per agent: the main sessions' calls and the teammate lanes' share it.

A real Agent, real git worktrees, the fake DeepSeek server over HTTP. The main
session's calls (here an `ask` in another session while a `run`'s lanes work,
as an editor sends one) and the lanes' calls take slots of the same per-model
`max_inflight`, and a 429 met by either pauses the other's next call. Orders
are read from the server's request log, never from timings: the manager's
clock advances only when the server receives a request, so a Retry-After pause
ends with the next request the server gets, and whatever waited for it comes
after that request. Every session made here must replay exactly (`make_agent`).
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from deepseek_ls.llm.capacity import ModelManager
from scenario_kit import diff, plan_json, scenario_config

FIX_ADD = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)
TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])
PLAN = plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["git status"])
REQUEST = "Fix add and add triple"
QUESTION = "What does add do?"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    return workspace


def lane_config(*, retries: int = 0):
    cfg = scenario_config()
    cfg.agent_loop.teammate_mode = True
    cfg.llm.max_retries = retries
    return cfg


def counting_clock(fake) -> Callable[[], float]:
    """A clock for the manager: the server's request count (x1000 s), so a pause of a few seconds
    ends exactly when the server receives its next request."""
    return lambda: 1000.0 * len(fake.requests)


def log(fake) -> list[tuple[str | None, int | None, str]]:
    """(role, status, the step an executor call is for) of every request, in arrival order."""
    def step(request) -> str:
        users = [m["content"] for m in request.body.get("messages", []) if m.get("role") == "user"]
        return next((s for s in ("Fix add", "Add triple") if users and f"Step: {s}" in users[-1]), "")
    return [(r.role, r.status, step(r)) for r in fake.requests]


async def test_main_session_and_lane_calls_never_exceed_max_inflight(make_agent, fake_deepseek, repo):
    cfg = lane_config()
    for entry in cfg.models.values():
        entry.max_inflight = 1
    slow = {"fault": {"delay_before_first_byte": 0.3}}  # held long enough that unthrottled calls overlap
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD, **slow})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE, **slow})
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds a and b.", **slow})
    agent = make_agent(config=cfg)

    run = asyncio.ensure_future(agent.run(REQUEST))
    await asyncio.to_thread(fake_deepseek.wait_for_requests, 2)  # the plan, then a lane's executor call
    answer = await agent.ask(QUESTION)  # the main session asks while that lane's call is held
    view = await run

    assert answer["content"] == "It adds a and b."
    assert view["state"] == "Completed", view["state_reason"]
    kinds = [e.kind for e in agent.store.open(view["session_id"]).read()]
    assert kinds.count("LaneCompleted@v1") == 2  # both steps ran in lanes
    assert sorted(r for r, _, _ in log(fake_deepseek)) == ["ask", "executor", "executor", "planner"]
    models = {r.body["model"] for r in fake_deepseek.requests}
    assert len(models) == 1, models  # one model: every call competed for its single slot
    assert fake_deepseek.peak_inflight == {models.pop(): 1}
    assert agent.models.peak_inflight and max(agent.models.peak_inflight.values()) == 1


async def test_a_429_met_by_the_main_session_delays_a_lanes_next_call(make_agent, fake_deepseek, repo):
    cfg = lane_config(retries=1)
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, "fault": {"hold": "plan"}})
    fake_deepseek.add({"match": {"role": "ask"}, "fault": {"status": 429, "retry_after": 2}})
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds a and b."})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})
    agent = make_agent(config=cfg, models=ModelManager(cfg, clock=counting_clock(fake_deepseek)))
    rate_limited = asyncio.Event()
    agent.llm.retry_listeners.append(lambda error, wait: rate_limited.set())  # told after the manager

    run = asyncio.ensure_future(agent.run(REQUEST))
    await asyncio.to_thread(fake_deepseek.wait_for_requests, 1)  # the run's plan is held at the server
    ask = asyncio.ensure_future(agent.ask(QUESTION))
    await rate_limited.wait()  # the ask met the 429 (Retry-After: 2) and waits to retry
    fake_deepseek.release("plan")  # now the lanes start and want the executor
    answer, view = await asyncio.gather(ask, run)

    assert answer["content"] == "It adds a and b."
    assert view["state"] == "Completed", view["state_reason"]
    assert log(fake_deepseek)[:3] == [("planner", 200, ""), ("ask", 429, ""), ("ask", 200, "")]
    # Both lanes' executor calls waited for the pause: they reached the server after the ask's retry.
    assert sorted(log(fake_deepseek)[3:]) == [("executor", 200, "Add triple"), ("executor", 200, "Fix add")]
    assert agent.models.rate_limited == 1


async def test_a_429_met_by_a_lane_delays_the_main_sessions_next_call(make_agent, fake_deepseek, repo):
    cfg = lane_config(retries=1)
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"},
                       "fault": {"status": 429, "retry_after": 2, "hold": "429"}})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds a and b."})
    agent = make_agent(config=cfg, models=ModelManager(cfg, clock=counting_clock(fake_deepseek)))
    rate_limited = asyncio.Event()
    agent.llm.retry_listeners.append(lambda error, wait: rate_limited.set())

    run = asyncio.ensure_future(agent.run(REQUEST))
    # The plan and both lanes' executor calls are in; the 429 for "Fix add" is answered only then.
    await asyncio.to_thread(fake_deepseek.wait_for_requests, 3)
    fake_deepseek.release("429")
    await rate_limited.wait()
    answer = await agent.ask(QUESTION)  # the main session's next call, during the lane's pause
    view = await run

    assert answer["content"] == "It adds a and b."
    assert view["state"] == "Completed", view["state_reason"]
    requests = log(fake_deepseek)
    assert requests[0] == ("planner", 200, "")
    assert sorted(requests[1:3]) == [("executor", 200, "Add triple"), ("executor", 429, "Fix add")]
    # The ask waited for the lane's pause: it reached the server after the lane's retry.
    assert requests[3:] == [("executor", 200, "Fix add"), ("ask", 200, "")]
    assert agent.models.rate_limited == 1
