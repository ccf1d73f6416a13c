"""A third-party ACP client, CodeCompanion.nvim, uses deepseek-ls in headless Neovim:
prompt -> streamed turn -> permission asked in its chat and granted -> file changed."""

from pathlib import Path

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

CLIENTS = Path(__file__).resolve().parents[2] / ".tools" / "clients"


def test_codecompanion_drives_deepseek_ls_over_acp(nvim, workspace, fake_model):
    for name in ("codecompanion.nvim", "plenary.nvim"):
        if not (CLIENTS / name).is_dir():
            pytest.fail(f"{name} is not installed in {CLIENTS}: run scripts/setup.sh --nvim", pytrace=False)
    _, env = fake_model
    env = {**env, "CODECOMPANION_DIR": str(CLIENTS / "codecompanion.nvim"), "PLENARY_DIR": str(CLIENTS / "plenary.nvim"),
           "DEEPSEEK_LS_INDEX__ENABLED": "false"}
    result = nvim.run("codecompanion_spec.lua", cwd=workspace, env=env, timeout=270)  # inside pytest-timeout, so a failure shows the spec output
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
