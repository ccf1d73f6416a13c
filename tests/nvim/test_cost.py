"""Headless Neovim shows the session's tokens and cost (statusline, :DeepSeekWhy) for a
session against the fake DeepSeek server, which reports DeepSeek's cache-hit usage fields."""

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


def test_statusline_and_why_show_tokens_and_cost(nvim, workspace, fake_model):
    fake, env = fake_model
    # Priced by the shipped deepseek-v4-flash preset.
    result = nvim.run("cost_spec.lua", cwd=workspace, env=env, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    assert [r["role"] for r in fake.requests()] == ["planner", "executor"]
