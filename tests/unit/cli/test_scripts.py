"""The README's two commands, the scripts behind them, and .ci/run agree."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls import __version__

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ["scripts/setup.sh", "scripts/run.sh", "scripts/test.sh", ".ci/run"]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    assert block, "README opens with a shell block"
    assert text.index(block.group(0)) < text.index("## What it is")
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands_run_then_test():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].startswith("scripts/run.sh")
    assert commands[1] == "scripts/test.sh"


def test_ci_runs_exactly_the_readme_test_command():
    body = [line for line in (ROOT / ".ci/run").read_text().splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("set ") and not line.startswith("cd ")]
    assert body == [f"exec {readme_commands()[1]}"]


def test_scripts_are_executable_bash_without_syntax_errors():
    for script in SCRIPTS:
        path = ROOT / script
        assert path.stat().st_mode & 0o111, f"{script} is executable"
        result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{script}: {result.stderr}"


def test_run_sh_sets_up_and_passes_its_arguments_to_the_cli():
    # With an up-to-date venv, setup is a no-op; otherwise it would install from the
    # registry, and tests stay off the network.
    stamp = Path(sys.executable).parent.parent / ".deepseek-ls-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text().strip() != wanted:
        pytest.skip("the venv is not set up by scripts/setup.sh for this pyproject.toml; run it first")
    result = subprocess.run([str(ROOT / "scripts/run.sh"), "--version"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"deepseek-ls {__version__}"


def test_setup_rejects_unknown_options():
    result = subprocess.run([str(ROOT / "scripts/setup.sh"), "--bogus"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "unknown option" in result.stderr
