"""Run the real `deepseek-ls` command in a subprocess, isolated from the user's config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

RunCli = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def cli_env(tmp_path: Path, user_config_home: Path) -> dict[str, str]:
    # The test process is the same user as the CLI (`user_config_home`): sessions and patches it
    # makes in-process are sealed with the key the CLI verifies them with.
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
    env["XDG_CONFIG_HOME"] = str(user_config_home)
    env["HOME"] = str(tmp_path / "home")
    return env


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    path = tmp_path / "empty"
    path.mkdir()
    return path


@pytest.fixture
def run_cli(cli_env: dict[str, str], empty_dir: Path) -> RunCli:
    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60):
        return subprocess.run(
            [sys.executable, "-m", "deepseek_ls", *args],
            cwd=cwd or empty_dir,
            env={**cli_env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
