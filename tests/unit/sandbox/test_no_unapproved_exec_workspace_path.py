"""A program named like one of ours, in an *absolute* PATH directory inside the workspace.

The person activated a virtualenv that lives in the repository (`PATH=/repo/.venv/bin:...`), or
put `/repo/bin` on PATH. `safe_exec_path` keeps absolute entries, so `git`, `rg` or `bwrap`
planted there (committed by the repository, or written by a sandboxed command: the sandbox lets
commands write the workspace) was found first — and `fs.list`'s git, the index's git and the
`bwrap` lookup run unconfined. Our own programs are now looked up outside every workspace
(`host_exec_path`); a command the policy lets run takes from such a directory only the
virtualenv's python and pip's entry points (`resolve_program`), so the activated venv's `pytest`
still runs (the last test) while a planted `rg` or `git` does not. What such a command starts in
turn (pytest's subprocesses) finds none of them either: the command's PATH keeps of the workspace
only virtualenv bins, shown in the sandbox with their vetted programs alone
(test_no_unapproved_exec_venv_children.py).

Canary: each planted program appends to a marker inside the workspace (where a sandboxed program
can write) and outside it (tmp_path/outside); neither may exist afterwards.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, RecordingUI, make_workspace

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.merge import git_binary
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.env import host_exec_path, resolve_program
from deepseek_ls.policy.git_safety import base_env
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

PLANTED = ("git", "pytest", "rg", "bwrap")
WHERE = [
    pytest.param(".venv/bin", True, id="activated-venv-in-the-repo"),
    pytest.param("bin", False, id="repo-bin-dir"),
    pytest.param("link", False, id="symlink-outside-leading-into-the-repo"),
]
RUNS = [
    pytest.param(("command", "git status --short"), id="verify-git-status"),
    pytest.param(("command", "rg -n add"), id="verify-rg"),
    pytest.param(("command", "pytest -q"), id="verify-pytest-planted-shell-script"),
    pytest.param(("tool", "git.status"), id="tool-git-status"),
    pytest.param(("tool", "git.diff"), id="tool-git-diff"),
    pytest.param(("tool", "fs.list"), id="tool-fs-list"),
    pytest.param(("tool", "fs.search_rg"), id="tool-search"),
    pytest.param(("lookup", "bwrap"), id="sandbox-binary"),
    pytest.param(("lookup", "merge-git"), id="three-way-merge-git"),
]


def _plant(root: Path, outside: Path, where: str, venv: bool, tmp_path: Path) -> Path:
    if where == "link":
        real = root / "tools"
        real.mkdir()
        entry = tmp_path / "linked-bin"
        entry.symlink_to(real)
    else:
        entry = real = root / where
        real.mkdir(parents=True)
    if venv:
        (real.parent / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    for name in PLANTED:
        program = real / name
        program.write_text(f"#!/bin/sh\necho {name} >> {root}/pwned-{name}\necho {name} >> {outside}/pwned-{name}\n")
        program.chmod(0o755)
    return entry


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize(("where", "venv"), WHERE)
async def test_no_unapproved_exec_repository_program_on_an_absolute_path_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, venv: bool, run: tuple[str, str]
) -> None:
    root, canaries = make_workspace(tmp_path)
    outside = canaries.markers[0].parent
    entry = _plant(root, outside, where, venv, tmp_path)
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}{os.environ['PATH']}")
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
    elif what == "bwrap":
        found = Sandbox(root).bwrap()
        assert found is None or not Path(found).resolve().is_relative_to(root), found
    else:
        assert not Path(git_binary()).resolve().is_relative_to(root)
    ran = sorted(p.name for p in root.glob("pwned-*"))
    assert ran == [], "a program of the repository ran"
    assert sorted(p.name for p in outside.glob("pwned-*")) == [], "a program of the repository ran unconfined"
    canaries.assert_intact(state=False)


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
async def test_an_activated_venv_in_the_workspace_still_runs_its_pytest(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = make_workspace(tmp_path)
    bindir = root / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    (bindir / "python").symlink_to(Path(sys.executable).resolve())
    entry_point = bindir / "pytest"  # what pip writes for a console script
    entry_point.write_text(f"#!{bindir}/python\nimport sys\nprint('VENV-PYTEST', sys.argv[1:])\n")
    entry_point.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    result = await world.run_command("pytest -q", 60)
    assert ui.approvals == []
    assert "VENV-PYTEST ['-q']" in result.output, result.output


def _venv(root: Path) -> Path:
    bindir = root / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (bindir / "python").symlink_to(Path(sys.executable).resolve())
    return bindir


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.mark.parametrize(("make", "taken"), [
    pytest.param(lambda b: None, "python", id="venv-interpreter-link"),
    pytest.param(lambda b: _script(b / "pytest", f"#!{b}/python\nimport pytest\n"), "pytest", id="pip-entry-point"),
    pytest.param(lambda b: _script(b / "pytest", f"#!{b}/python3.11 -E\n"), "pytest", id="pip-entry-point-python3x"),
    pytest.param(lambda b: _script(b / "pytest", f"#!/bin/sh\n'''exec' \"{b}/python\" \"$0\" \"$@\"\n' '''\n"),
                 "pytest", id="pip-entry-point-long-path-form"),
    pytest.param(lambda b: _script(b / "rg", "#!/bin/sh\necho pwned\n"), None, id="shell-script"),
    pytest.param(lambda b: _script(b / "pytest", "#!/usr/bin/python3\n"), None, id="other-interpreter"),
    pytest.param(lambda b: (b / "git").symlink_to("/bin/sh"), None, id="link-to-a-shell"),
])
def test_resolve_program_takes_only_the_venvs_own_programs_from_the_workspace(tmp_path: Path, make, taken) -> None:
    root = tmp_path / "ws"
    bindir = _venv(root)
    make(bindir)
    name = taken or next(p.name for p in bindir.iterdir() if p.name != "python")
    elsewhere = tmp_path / "system"
    elsewhere.mkdir()
    _script(elsewhere / name, "#!/bin/sh\n")
    found = resolve_program(name, f"{bindir}:{elsewhere}", workspace=root)
    assert found == str((bindir if taken else elsewhere) / name)


def test_host_exec_path_drops_workspace_directories(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "bin").mkdir(parents=True)
    link = tmp_path / "l"
    link.symlink_to(root / "bin")
    value = f"{root}/bin:.:{link}:/usr/bin:{root}/.venv/bin:{root}:{tmp_path}/ws2/bin"
    # The workspace itself goes too; a sibling whose name starts like it (`ws2`) stays.
    assert host_exec_path(value, workspace=root) == f"/usr/bin:{tmp_path}/ws2/bin"
    assert base_env({"PATH": value}, workspace=root)["PATH"] == f"/usr/bin:{tmp_path}/ws2/bin"


def test_host_exec_path_drops_directories_of_every_noted_workspace(tmp_path: Path) -> None:
    """A workspace noted by any sandbox of this process (among hundreds) stays excluded."""
    for i in range(300):
        Sandbox(tmp_path / f"other-{i}")
    Sandbox(tmp_path / "noted")
    value = f"{tmp_path}/noted/bin:{tmp_path}/noted-not/bin:/usr/bin:{tmp_path}/other-7/node_modules/.bin"
    assert host_exec_path(value) == f"{tmp_path}/noted-not/bin:/usr/bin"
