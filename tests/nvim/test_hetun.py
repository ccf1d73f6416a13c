"""Headless Neovim runs a Hetun session against the real server and the fake DeepSeek
process: research -> mission document -> Approve mission lens -> buffer edited, :write -> research
tree in the plan document."""

import json

import pytest
from conftest import DIFF, PLAN

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

SCRIPT = [
    {"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\n"},
    {"match": {"role": "hetun.sub"}, "repeat": True,
     "content": "FINDING|0.8|app.py:2 greet concatenates strings instead of an f-string\n"},
    {"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|line 2"},
    {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"},
    {"match": {"role": "executor"}, "content": "```diff\n" + DIFF + "```"},
]


def test_hetun_mission_approved_from_its_lens(nvim, workspace, fake_deepseek_process):
    fake = fake_deepseek_process(SCRIPT)
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    result = nvim.run("hetun_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    roles = [r["role"] for r in fake.requests()]
    assert "hetun.sub" in roles and "hetun.crosscheck" in roles and "executor" in roles
    assert "f'hello {name}'" in (workspace / "app.py").read_text()
