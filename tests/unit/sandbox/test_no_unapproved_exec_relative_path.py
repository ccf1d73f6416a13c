"""A program named like an allowlisted one, found first on a PATH the repository controls.

Editors start the language server in the workspace. When the person's PATH has an empty entry
(`PATH=/usr/bin:`, `:$PATH`, a classic shell-profile slip) or a relative one (`.`, `bin`,
`node_modules/.bin`), a lookup of `git` or `pytest` finds the repository's own file first:
`git status --short` (unprompted verification) ran `./git`, and `fs.list` — whose git runs
outside the sandbox — ran it unconfined, able to write anywhere. Every program we start is
looked up on a PATH of absolute directories only (`policy/env.safe_exec_path`).

Canary: each planted program appends to a marker file inside the workspace (where a sandboxed
program can write) and outside it; neither may exist afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, make_workspace

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.env import safe_exec_path, scrubbed_env
from deepseek_ls.policy.git_safety import base_env
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

PLANTED = ("git", "pytest", "rg", "bwrap")
# (id, directory the programs are planted in, relative to the workspace; PATH entry that finds it)
PATHS = [
    pytest.param("", "", id="empty-entry-first"),
    pytest.param("", "::", id="empty-entry-between"),
    pytest.param("", ".", id="dot"),
    pytest.param("bin", "bin", id="relative-bin"),
    pytest.param("node_modules/.bin", "./node_modules/.bin", id="node-modules-bin"),
]
RUNS = [
    pytest.param(("command", "git status --short"), id="verify-git-status"),
    pytest.param(("command", "pytest -q"), id="verify-pytest"),
    pytest.param(("command", "rg -n add"), id="verify-rg"),
    pytest.param(("tool", "git.status"), id="tool-git-status"),
    pytest.param(("tool", "git.diff"), id="tool-git-diff"),
    pytest.param(("tool", "fs.list"), id="tool-fs-list"),
    pytest.param(("tool", "fs.search_rg"), id="tool-search"),
    pytest.param(("sandbox", "bwrap"), id="sandbox-binary"),
]


def _plant(root: Path, outside: Path, where: str) -> Path:
    directory = root / where
    directory.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        program = directory / name
        program.write_text(f"#!/bin/sh\necho {name} >> {root}/pwned-{name}\necho {name} >> {outside}/pwned-{name}\n")
        program.chmod(0o755)
    return directory


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize(("where", "entry"), PATHS)
async def test_no_unapproved_exec_repository_program_on_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, entry: str, run: tuple[str, str]
) -> None:
    root, canaries = make_workspace(tmp_path)
    outside = canaries.markers[0].parent
    _plant(root, outside, where)
    real = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{entry}:{real}" if entry != "::" else f"{real.split(':')[0]}::{real}")
    monkeypatch.chdir(root)  # where an editor starts the server
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    kind, what = run
    if kind == "command":
        world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
        try:
            await world.run_command(what, 60)
        except Exception:  # noqa: BLE001 - refused or failed is fine; what ran is the question
            pass
    elif kind == "tool":
        await host.call(what, {"query": "add"} if what == "fs.search_rg" else {})
    else:
        found = Sandbox(root).bwrap()
        assert found is None or (Path(found).is_absolute() and not Path(found).is_relative_to(root)), found
    assert sorted(p.name for p in root.glob("pwned-*")) == [], "a program of the repository ran"
    assert sorted(p.name for p in outside.glob("pwned-*")) == [], "a program of the repository ran unconfined"
    canaries.assert_intact(state=False)


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("/usr/bin:", "/usr/bin", id="trailing-colon"),
        pytest.param(":/usr/bin", "/usr/bin", id="leading-colon"),
        pytest.param(".:/usr/bin:bin:/opt/x/bin", "/usr/bin:/opt/x/bin", id="relative-entries"),
        pytest.param("/w/.venv/bin:/usr/bin", "/w/.venv/bin:/usr/bin", id="absolute-venv-kept"),
    ],
)
def test_exec_path_keeps_only_absolute_directories(path: str, want: str) -> None:
    assert safe_exec_path(path) == want
    assert scrubbed_env({"PATH": path})["PATH"] == want
    assert base_env({"PATH": path})["PATH"] == want


def test_exec_path_never_ends_up_empty() -> None:
    assert safe_exec_path(".:bin:") and all(os.path.isabs(p) for p in safe_exec_path(".:bin:").split(":"))
