"""Headless Neovim answers the agent's free-text question (`deepseek/question`)
through vim.ui.input and `deepseek.answer`; the planner's next request carries
the answer. <Esc> cancels: the planner is not asked again."""

import json
import re
from pathlib import Path

import pytest

from deepseek_ls.lsp import names

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

PLAN = {
    "goal": "make the greeting formal",
    "assumptions": [],
    "steps": [{"title": "Make greet formal", "intent": "edit", "files": ["app.py"]}],
    "verification": [],
    "risk_notes": [],
    "confidence": 0.9,
}
SCRIPT = [
    {"match": {"role": "planner", "contains": "The user answered: formal"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"},
    {"match": {"role": "planner"}, "content": "ASK_USER|Which greeting style?"},
]


@pytest.mark.parametrize("via", ["answer", "escape"])
def test_question_round_trip_through_vim_ui_input(nvim, workspace, fake_deepseek_process, via):
    fake = fake_deepseek_process(SCRIPT)
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_QUESTION_VIA": via}
    result = nvim.run("question_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    planner = [json.dumps(r["body"]) for r in fake.requests() if r["role"] == "planner"]
    if via == "answer":
        assert len(planner) == 2, planner
        assert "The user answered" not in planner[0]
        assert "You asked: Which greeting style?" in planner[1] and "The user answered: formal" in planner[1]
    else:
        assert len(planner) == 1, planner


def test_lua_experimental_capabilities_match_the_server():
    lua = (Path(__file__).resolve().parents[2] / "nvim" / "lua" / "deepseek" / "protocol.lua").read_text()
    body = re.search(r"^M\.experimental = \{\n(.*?)^\}", lua, re.S | re.M)
    assert body, "M.experimental not found in protocol.lua"
    declared = set(re.findall(r'^\s+\w+ = "([^"]+)",', body.group(1), re.M))
    assert declared == {v for k, v in vars(names).items() if k.startswith("EXPERIMENTAL_")}
