"""`deepseek-ls --help` lists every subcommand; every subcommand has its own help."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls import __version__

COMMANDS = ["serve", "ask", "plan", "chat", "run", "autopilot", "diff", "apply", "index", "sessions",
            "replay", "config"]
SUBCOMMANDS = [["index", "build"], ["index", "update"], ["index", "status"], ["index", "query"],
               ["config", "show"], ["config", "edit"], ["config", "path"]]


def test_help_lists_every_subcommand_and_the_global_flags(run_cli):
    result = run_cli("--help")
    assert result.returncode == 0
    listed = re.findall(r"^\s{4}(\w+)\s", result.stdout, flags=re.MULTILINE)
    assert set(COMMANDS) <= set(listed)
    for flag in ("--workspace", "--config", "--profile", "--verbose", "--version", "--json"):
        assert flag in result.stdout


@pytest.mark.parametrize("command", [[c] for c in COMMANDS] + SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help_and_accepts_global_flags_after_it(run_cli, command):
    result = run_cli(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert f"usage: deepseek-ls {' '.join(command)}" in result.stdout
    assert "--workspace" in result.stdout


def test_serve_accepts_the_flags_editors_pass(run_cli):
    result = run_cli("serve", "--help")
    for flag in ("--stdio", "--tcp", "--host", "--port"):
        assert flag in result.stdout


def test_version_and_console_script(run_cli):
    result = run_cli("--version")
    assert result.stdout.strip() == f"deepseek-ls {__version__}"
    script = Path(sys.executable).with_name("deepseek-ls")
    assert script.exists() or shutil.which("deepseek-ls"), "the console script is installed"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"deepseek-ls {__version__}"


def test_a_group_without_its_action_prints_help_and_exits_2(run_cli):
    result = run_cli("config")
    assert result.returncode == 2
    assert "show" in result.stderr and "edit" in result.stderr


def test_an_unknown_command_is_a_usage_error(run_cli):
    result = run_cli("frobnicate")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
