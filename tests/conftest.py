"""Shared test configuration: the fake DeepSeek server fixtures come from the testkit plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["deepseek_ls.testkit.pytest_plugin"]


@pytest.fixture
def user_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user config directory (`XDG_CONFIG_HOME`) of the servers and CLIs this test starts, and of
    the test process too: patches it stages and checkpoints it takes in-process are sealed with the
    same user's key (`patch/seal.py`), so the server offers them, and what the server saves reads
    back here. Another user's would be ignored."""
    home = tmp_path / "xdg-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("DEEPSEEK_LS_USER_CONFIG", raising=False)
    return home
