"""One ledger per session (agent/ledger.py): the calls of teammate lanes and of Hetun helper blocks are
the session's, so its cost and token caps hold for them too and pause the whole session with the reason.

The model is the fake DeepSeek server over loopback, each answer billing the usage the test sets; every
session (the lanes' own too) is replayed by the `make_agent` fixture afterwards.
"""

from __future__ import annotations

import pytest
from scenario_kit import ScriptedUI, git, scenario_config
from test_teammate_lanes import FIX_ADD, GREET, PLAN, TRIPLE  # the lanes' 3-step plan and its answers

from deepseek_ls.agent.replay import replay_session
from deepseek_ls.llm.budget import Tokens

def bill(prompt: int, output: int) -> dict:
    """An answer's usage: `prompt` tokens missed by the cache, `output` tokens out."""
    return {"usage": {"prompt_tokens": prompt, "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": prompt,
                      "completion_tokens": output, "total_tokens": prompt + output}}


def calls(agent, sid: str) -> list[dict]:
    return [e.payload for e in agent.store.open(sid).read() if e.kind == "LLMCall@v1"]


def tokens(payloads: list[dict]) -> int:
    return sum(Tokens.from_usage(p.get("usage")).total for p in payloads)


@pytest.fixture
def repo(workspace):
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    return workspace


def lanes_config(max_tokens: int):
    cfg = scenario_config()
    cfg.agent_loop.teammate_mode = True
    cfg.budget.max_tokens = max_tokens
    return cfg


async def test_two_lanes_that_together_pass_the_token_cap_pause_the_session(make_agent, fake_deepseek, repo):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, **bill(10, 10)})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD, **bill(500, 500)})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE,
                       **bill(500, 500)})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Greet with comma"}, "content": GREET})
    agent = make_agent(config=lanes_config(1500))  # each lane alone (20 + 1000) stays under it; both pass it
    view = await agent.run("Fix add, add triple, greet with a comma")
    sid = view["session_id"]
    assert view["state"] == "Paused", view.get("last_error")
    reason = view["state_reason"]
    assert "token budget reached" in reason and "2020 tokens of max_tokens 1500" in reason, reason
    executors = [r for r in fake_deepseek.requests if r.role == "executor"]
    assert len(executors) == 2 and not any("Step: Greet" in str(r.body) for r in executors)  # nothing more spent

    log = agent.store.open(sid).read()
    lane_sids = [e.payload["lane_session_id"] for e in log if e.kind == "LaneStarted@v1"]
    charged = [e.payload for e in log if e.kind == "LedgerCharged@v1"]
    assert len(lane_sids) == 2 and sorted(c["lane_session_id"] for c in charged) == sorted(lane_sids)
    # The session's ledger is every call made for it: its own and its lanes'.
    everything = calls(agent, sid) + [c for lane in lane_sids for c in calls(agent, lane)]
    assert view["cost"]["session"]["tokens"]["total"] == tokens(everything) == 2020
    assert view["cost"]["session"]["calls"] == len(everything) == 3

    # Replay pauses at the same place from the charged calls; under a looser cap it would not have paused.
    assert (await replay_session(repo, agent.state_dir, lanes_config(1500), sid)).ok
    assert not (await replay_session(repo, agent.state_dir, lanes_config(5000), sid)).ok


async def test_a_lane_stops_before_a_call_once_the_sessions_cap_is_reached(make_agent, fake_deepseek, repo):
    """The planner alone reaches the cap: no lane may spend (each would have had a budget of its own)."""
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN, **bill(600, 600)})
    fake_deepseek.add({"match": {"role": "executor"}, "repeat": True, "content": FIX_ADD})
    agent = make_agent(config=lanes_config(1000))
    view = await agent.run("Fix add, add triple, greet with a comma")
    assert view["state"] == "Paused", view.get("last_error")
    assert "1200 tokens of max_tokens 1000" in view["state_reason"]
    assert [r.role for r in fake_deepseek.requests] == ["planner"]


HELPER_BLOCK = ("SLICE|app.py\n```python\n"
                "first = ask_fast('is add right?', read_file('app.py'))\n"
                "second = ask_fast('and greet?', read_file('app.py'))\n"
                "result([first, second])\n```\n")


async def test_a_hetun_helper_block_whose_calls_pass_the_cap_pauses_the_session(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "hetun.coordinator"}, "content": HELPER_BLOCK, **bill(10, 10)})
    fake_deepseek.add({"match": {"role": "hetun.helper"}, "repeat": True, "content": "add looks wrong",
                       **bill(500, 500)})
    fake_deepseek.add({"match": {"role": "hetun.sub"}, "repeat": True, "content": "NOTHING"})
    cfg = scenario_config()
    cfg.budget.max_tokens = 1000
    agent = make_agent(ui=ScriptedUI(answers=["reject"]), config=cfg)
    view = await agent.run("Fix add in app.py", mode="hetun")
    sid = view["session_id"]
    assert view["state"] == "Paused", view.get("last_error")
    assert "token budget reached" in view["state_reason"] and "max_tokens 1000" in view["state_reason"]
    # The block's second model call was refused, and nothing else was asked after it.
    assert [r.role for r in fake_deepseek.requests] == ["hetun.coordinator", "hetun.helper"]
    assert view["cost"]["session"]["tokens"]["total"] == tokens(calls(agent, sid)) == 1020
    assert (await replay_session(workspace, agent.state_dir, cfg, sid)).ok
