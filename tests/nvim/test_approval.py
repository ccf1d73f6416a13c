"""Headless Neovim answers the server's approval request (window/showMessageRequest)
through vim.ui.select, through :DeepSeekApprove, or denies it."""

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


@pytest.mark.parametrize("via", ["select", "command", "deny"])
def test_gated_patch_waits_for_the_answer(nvim, workspace, fake_model, via):
    _, env = fake_model
    result = nvim.run("approval_spec.lua", cwd=workspace, env={**env, "DEEPSEEK_APPROVE_VIA": via}, timeout=240)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
