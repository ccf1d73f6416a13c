""":DeepSeekCancel in headless Neovim against the real server while the fake
DeepSeek streams slowly: a plan and a step stop mid-stream; the step can be
run again."""

from __future__ import annotations

import json

import pytest
from conftest import DIFF, PLAN

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

SLOW = {"chunk_chars": 5, "chunk_delay": 0.03}
LONG = "thinking about it " * 200  # ~20 s at that pace: cancelled long before

SCRIPT = [
    {"match": {"role": "planner", "contains": "slow plan please"}, "content": LONG, **SLOW},
    {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"},
    {"match": {"role": "executor"}, "content": LONG, **SLOW},
    {"match": {"role": "executor"}, "content": "```diff\n" + DIFF + "```"},
]


def test_deepseek_cancel_stops_a_plan_and_a_step_mid_stream(nvim, workspace, fake_deepseek_process):
    fake = fake_deepseek_process(SCRIPT)
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    result = nvim.run("cancel_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    roles = [r["role"] for r in fake.requests()]
    assert roles == ["planner", "planner", "executor", "executor"], roles
