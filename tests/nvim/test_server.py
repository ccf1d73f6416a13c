"""Headless Neovim starts the real deepseek-ls through the plugin."""

import pytest

pytestmark = pytest.mark.nvim


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param("enable", id="setup-vim.lsp.enable"),
        pytest.param("start", id="setup-vim.lsp.start-as-on-0.10"),
        pytest.param("user", id="no-setup-user-vim.lsp.enable"),
    ],
)
def test_plugin_starts_server_and_initializes(nvim, workspace, mode):
    result = nvim.run("server_spec.lua", cwd=workspace, env={"DEEPSEEK_START_MODE": mode})
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
