"""Headless Neovim: the plugin's own behaviour (no model involved)."""

import pytest

pytestmark = pytest.mark.nvim


def test_plugin_spec_passes_in_headless_neovim(nvim, workspace):
    result = nvim.run("plugin_spec.lua", cwd=workspace)
    assert result.returncode == 0, result.output
    assert "checkhealth deepseek reports version, key presence and no errors" in " ".join(result.passed())
    assert "0 failed" in result.output
