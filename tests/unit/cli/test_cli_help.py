"""`deepseek-ls --help` lists every subcommand; every subcommand has its own help."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls import __version__
from deepseek_ls.cli import COMMANDS as COMMAND_MODULES
from deepseek_ls.cli import SUMMARIES, build_parser, command_in, main

COMMANDS = ["serve", "ask", "plan", "chat", "run", "autopilot", "diff", "apply", "index", "sessions",
            "replay", "config", "models", "trust"]
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
def test_every_subcommand_has_help_and_accepts_global_flags_after_it(command, capsys):
    # In-process (the same `main` the console script calls): one subprocess per
    # command would cost seconds each on a busy machine.
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: deepseek-ls {' '.join(command)}" in out
    assert "--workspace" in out


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


def _registered(parser: argparse.ArgumentParser) -> set[str]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(action.choices)


def test_help_summaries_are_what_each_module_registers():
    """`--help` lists commands from `SUMMARIES` without importing their modules."""
    registered = {
        choice.dest: choice.help
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }
    assert registered == SUMMARIES


def test_the_command_map_names_the_module_of_every_registered_command():
    assert _registered(build_parser()) == set(COMMAND_MODULES)
    for command, module in COMMAND_MODULES.items():
        only = _registered(build_parser([command]))
        assert command in only
        assert all(COMMAND_MODULES[other] == module for other in only), f"{module} registers {only}"


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        pytest.param(["config", "show"], "config", id="plain"),
        pytest.param(["--workspace", "config", "sessions"], "sessions", id="option-value-like-a-command"),
        pytest.param(["-v", "--json", "replay", "abc"], "replay", id="flags-first"),
        pytest.param(["--config=x.toml", "index", "status"], "index", id="equals-form"),
        pytest.param(["--help"], None, id="no-command"),
    ],
)
def test_command_in_skips_global_options_and_their_values(argv, command):
    assert command_in(argv) == command


def test_help_imports_no_command_module_nor_the_core():
    code = (
        "import sys\n"
        "from deepseek_ls.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.startswith(('deepseek_ls.cli.', 'deepseek_ls.config', 'pydantic',"
        " 'deepseek_ls.agent', 'deepseek_ls.llm', 'httpx'))]\n"
        "print('HEAVY', sorted(m for m in heavy if m != 'deepseek_ls.cli.common'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out
