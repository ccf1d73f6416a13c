"""deepseek-ls works however it is installed: a session that searches (and finds), verifies, and
runs a Hetun helper block, from the product installed the way users install it.

Each layout installs the wheel built from this checkout (or its editable wheel) with pip into a
fresh virtualenv under a temporary `$HOME` or under `/tmp`, and starts `deepseek-ls` by absolute
path — or by name from a PATH directory holding one link to it, as pipx does — with the venv's
`bin` not on `PATH` and an environment as small as an editor started from a desktop gives. The
model is the fake DeepSeek server; the workspace (under that home, or under a `/tmp` path with a
space) has its own `.venv` with pytest, which verification runs. The sandbox hides the home and
replaces `/tmp`, so before `policy/sandbox_install.py` every layout here failed: the search came
back empty, the helper block ended without an answer, verification could not run `python`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from install_kit import (build_editable, copy_sources, exec_path, install, make_venv, project_venv, site_packages,
                         uv_tool_install)

from deepseek_ls.policy.sandbox import Sandbox

pytestmark = pytest.mark.skipif(not Sandbox(Path("/")).status().available,
                                reason="no working bubblewrap here: nothing of the sandbox to test")

APP = "def greet(name):\n    return 'Hello ' + name\n\n\ndef add(a, b):\n    return a - b\n"
TEST_APP = "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ADD_FIX = "```diff\n--- a/app.py\n+++ b/app.py\n@@ -6,1 +6,1 @@\n-    return a - b\n+    return a + b\n```"
HELPER_BLOCK = ("SLICE|app.py\n```python\n"
                "text = read_file('app.py')\n"
                "finding('app.py has ' + str(count_lines(text)) + ' lines', 0.4)\n"
                "result(count_lines(text))\n```\n")
PLAN = {"goal": "fix add", "assumptions": [], "risk_notes": [], "confidence": 0.9,
        "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]}],
        "verification": ["python -m pytest -q -k add"]}
REPLIES = [
    {"match": {"role": "hetun.coordinator"}, "content": HELPER_BLOCK},
    {"match": {"role": "hetun.sub", "contains": "Slice: app.py"}, "content": "FINDING|0.9|app.py:6 add returns a - b\n"},
    {"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|the code says so"},
    {"match": {"role": "planner", "last_role": "user"},
     "tool_calls": [{"name": "fs_search_rg", "arguments": {"query": "return a - b"}}]},
    # Answered only when the search found the line: an empty result matches no reply (the server says so).
    {"match": {"role": "planner", "last_role": "tool", "last_contains": "app.py"},
     "content": "```json\n" + json.dumps(PLAN) + "\n```"},
    {"match": {"role": "executor"}, "content": ADD_FIX},
]


@dataclass
class Installed:
    argv0: str  # how the person starts it
    path_dirs: list[Path]  # PATH directories the layout adds (a pipx link directory)
    workspace: Path
    package: Path  # where `import deepseek_ls` must come from


def _workspace(parent: Path) -> Path:
    root = parent / "app"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    (root / ".gitignore").write_text(".venv/\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                       capture_output=True, timeout=60)
    return root


def _wheel_venv(prefix: Path, wheel: Path) -> Path:
    make_venv(prefix)
    install(prefix, wheel)
    return site_packages(prefix) / "deepseek_ls"


def _layout(name: str, home: Path, tmp: Path, wheel: Path) -> Installed:
    if name == "wheel-venv-in-home":
        package = _wheel_venv(home / ".venvs" / "deepseek-ls", wheel)
        return Installed(str(home / ".venvs" / "deepseek-ls" / "bin" / "deepseek-ls"), [],
                         _workspace(home / "code"), package)
    if name == "wheel-venv-under-tmp-one-symlink":
        package = _wheel_venv(tmp / "opt" / "deepseek-ls", wheel)
        link = home / "bin" / "deepseek-ls"  # not on PATH: an editor setting names it
        link.parent.mkdir()
        link.symlink_to(tmp / "opt" / "deepseek-ls" / "bin" / "deepseek-ls")
        return Installed(str(link), [], _workspace(tmp / "work space"), package)
    if name == "pipx-style":
        venv = home / ".local" / "share" / "pipx" / "venvs" / "deepseek-ls"
        package = _wheel_venv(venv, wheel)
        links = home / ".local" / "bin"
        links.mkdir(parents=True)
        (links / "deepseek-ls").symlink_to(venv / "bin" / "deepseek-ls")
        return Installed("deepseek-ls", [links], _workspace(home / "code"), package)
    if name == "uv-tool":
        venv = uv_tool_install(home, wheel)  # its link in ~/.local/bin, not on PATH: an editor setting names it
        return Installed(str(home / ".local" / "bin" / "deepseek-ls"), [], _workspace(home / "code"),
                         site_packages(venv) / "deepseek_ls")
    if name == "editable-checkout-in-home":
        checkout = copy_sources(home / "src" / "deepseek-ls")
        make_venv(checkout / ".venv")
        install(checkout / ".venv", build_editable(checkout, tmp / "editable"))
        return Installed(str(checkout / ".venv" / "bin" / "deepseek-ls"), [], _workspace(home / "code"),
                         checkout / "deepseek_ls")
    raise AssertionError(name)


LAYOUTS = ["wheel-venv-in-home", "wheel-venv-under-tmp-one-symlink", "pipx-style", "uv-tool", "editable-checkout-in-home"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_installed_product_searches_verifies_and_runs_a_helper_block(
        layout: str, home: Path, tmp_path: Path, wheel: Path, project_packages: Path, fake_deepseek_process) -> None:
    installed = _layout(layout, home, tmp_path, wheel)
    workspace = installed.workspace
    fake = fake_deepseek_process(REPLIES)
    env = {"HOME": str(home), "LANG": "C.UTF-8", "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key",
           "PATH": exec_path(*installed.path_dirs, project_venv(workspace, project_packages))}
    # The program that runs is the installed one, its venv's bin not on PATH, importing the installed package.
    entry = Path(os.path.realpath(shutil.which(installed.argv0, path=env["PATH"]) or installed.argv0))
    assert str(entry.parent) not in env["PATH"].split(os.pathsep)
    imported = subprocess.run([str(entry.parent / "python"), "-c", "import deepseek_ls; print(deepseek_ls.__file__)"],
                              env=env, cwd=workspace, capture_output=True, text=True, timeout=60, check=True)
    assert Path(imported.stdout.strip()).parent == installed.package

    done = subprocess.run([installed.argv0, "run", "--hetun", "Fix add in app.py", "--json"], cwd=workspace,
                          env=env, input="approve\n", capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{done.stdout}{done.stderr}(fake server: {fake.proc.poll()})"
    view = json.loads(done.stdout)
    assert view["state"] == "Completed", view.get("last_error")
    assert "return a + b" in (workspace / "app.py").read_text()

    helper = next(n for n in view["hetun"]["research"]["nodes"] if n["kind"] == "helper")
    assert helper["status"] == "ok", helper["error"]
    assert "app.py has 6 lines" in [f["text"] for f in helper["findings"]]

    log = workspace / ".deepseek" / "sessions" / view["session_id"] / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    searches = [e["payload"] for e in events if e["kind"] == "ToolResult@v1" and e["payload"]["tool"] == "fs.search_rg"]
    assert searches and searches[0]["ok"], searches
    verified = [e["payload"] for e in events if e["kind"] == "VerificationRun@v1"]
    assert verified and all(v["ok"] for v in verified), verified
