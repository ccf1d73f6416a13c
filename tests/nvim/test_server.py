"""Headless Neovim starts the real deepseek-ls through the plugin."""

import pytest

pytestmark = pytest.mark.nvim


@pytest.mark.parametrize(
    "use_lsp_enable",
    [pytest.param("1", id="vim.lsp.enable"), pytest.param("0", id="vim.lsp.start-as-on-0.10")],
)
def test_plugin_starts_server_and_initializes(nvim, workspace, use_lsp_enable):
    result = nvim.run("server_spec.lua", cwd=workspace, env={"DEEPSEEK_USE_LSP_ENABLE": use_lsp_enable})
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
