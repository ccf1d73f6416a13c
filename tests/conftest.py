"""Shared test configuration: the fake DeepSeek server fixtures come from the testkit plugin, and
every test runs with its own XDG directories, guarded against touching the real user's state
(`deepseek_ls/testkit/home_guard.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["deepseek_ls.testkit.pytest_plugin", "deepseek_ls.testkit.home_guard", "pytester"]


@pytest.fixture
def user_config_home(isolated_user_dirs: Path) -> Path:
    """The user config directory (`XDG_CONFIG_HOME`) of the servers and CLIs this test starts, and of
    the test process too: patches it stages and checkpoints it takes in-process are sealed with the
    same user's key (`patch/seal.py`), so the server offers them, and what the server saves reads
    back here. Another user's would be ignored. (Every test has it, `isolated_user_dirs`; a test
    names it to say it relies on being that user.)"""
    return isolated_user_dirs
