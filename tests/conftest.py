"""Shared test configuration: the fake DeepSeek server fixtures come from the testkit plugin, and
every test runs with its own XDG directories, guarded against touching the real user's state
(`deepseek_ls/testkit/home_guard.py`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["deepseek_ls.testkit.pytest_plugin", "deepseek_ls.testkit.home_guard", "pytester"]


@pytest.fixture
def user_config_home(isolated_user_dirs: Path) -> Path:
    """The user config directory (`XDG_CONFIG_HOME`) of the servers and CLIs this test starts, and of
    the test process too: patches it stages and checkpoints it takes in-process are sealed with the
    same user's key (`store/seal.py`), so the server offers them, and what the server saves reads
    back here. Another user's would be ignored. (Every test has it, `isolated_user_dirs`; a test
    names it to say it relies on being that user.)"""
    return isolated_user_dirs


# Under pytest-xdist (`scripts/test.sh`: --dist loadfile --no-loadscope-reorder) each file runs whole
# on one worker, handed out in collection order. The longest files go first, so that no long file
# starts near the end and holds the run open alone: editors and installs, then the end-to-end files
# measured slowest (docs/testing.md, "CI time"), then the directories of processes, the unit tests
# (many short files that fill the workers at the end) last. xdist's default order (most tests
# first) put the few-test end-to-end files last. One process keeps pytest's order.
# The VS Code panel's file starts after two others: both VS Code files build the .vsix as they start,
# and the two builds must not write it at once.
LONGEST_FIRST = (
    "tests/vscode/test_vscode_e2e.py", "tests/install/", "tests/acp/test_hostile_acp_client.py", "tests/vscode/",
    "tests/bench/", "tests/llama/",
    "tests/cli/test_ask.py", "tests/cli/test_no_leak_api_key_cli_ask.py", "tests/cli/test_never_hang_cli_refusals.py",
    "tests/unit/cli/test_config_show_fast.py",
    "tests/unit/cli/test_sessions_cmd.py", "tests/acp/", "tests/cli/", "tests/nvim/", "tests/emacs/", "tests/mcp/",
    "tests/lsp/", "tests/scenarios/",
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return

    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)),
                    len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: a file's tests keep their order
