"""Headless Neovim: inline completion from the real server and the fake model's FIM endpoint.
On the 0.12 build the plugin enables `vim.lsp.inline_completion`, the suggestion shows as ghost
text and the accept key inserts it; on 0.11 (no inline completion) the plugin attaches without an
error and maps nothing."""

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]


def test_inline_completion_ghost_text_and_accept(nvim, workspace, fake_deepseek_process):
    fake = fake_deepseek_process([{"match": {"endpoint": "fim", "contains": "def sub(a, b):"},
                                   "content": "return a - b", "repeat": True}])
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    result = nvim.run("inline_spec.lua", cwd=workspace, env=env, timeout=120)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    fim = [r for r in fake.requests() if r["endpoint"] == "fim"]
    if "SKIP inline completion" in result.output:
        assert fim == [], "a Neovim without inline completion asked for none"
    else:
        assert fim and fim[0]["body"]["prompt"].endswith("def sub(a, b):\n    ")
        assert fim[0]["body"]["suffix"].startswith("pass\n")
