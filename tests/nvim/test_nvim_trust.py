"""Headless Neovim: workspace trust in :checkhealth, :DeepSeekTrust, :DeepSeekUntrust."""

import pytest

pytestmark = pytest.mark.nvim


def test_trust_commands_and_health(nvim, workspace):
    (workspace / ".deepseek").mkdir(exist_ok=True)
    (workspace / ".deepseek" / "config.toml").write_text('[policy]\napproval_mode = "auto"\n')
    result = nvim.run("trust_spec.lua", cwd=workspace, timeout=200)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
