"""A program an allowed command starts never runs a file the repository planted in its venv's bin.

The person activated a virtualenv inside the workspace (`PATH=/repo/.venv/bin:...`). The command
we start (`pytest`) is that venv's own entry point (`resolve_program` vets it), but what *it*
starts looks names up on the same PATH: a `git`, `sh` or `ls` the repository committed to
`.venv/bin` (or a sandboxed command wrote there: the workspace is writable) ran in place of the
system's. Inside the sandbox the venv's bin directory is now a read-only view holding only what
`resolve_program` would take from it (the interpreter, pip's entry points, the non-executable
activate scripts); a name it lacks falls through to the system's.

Each case: the venv's `pytest` (a pip-style entry point) runs `<tool>` by name through
subprocess; the planted `<tool>` would print PLANTED and write a marker in the workspace.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from sandbox_kit import make_workspace, requires_sandbox

from deepseek_ls.config_models import PolicyConfig, SandboxConfig
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import shell

TOOLS = [
    pytest.param(name, id=name)
    for name in ("git", "ls", "sh", "bash", "env", "cat", "rg", "make", "node", "npm", "curl", "ssh", "python3",
                 "pip", "uname", "id")
]

RUNNER = """#!{bindir}/python
import subprocess, sys
print("RUNNER-RAN")
try:
    subprocess.run([sys.argv[1], "--version"], timeout=30, stdin=subprocess.DEVNULL,
                   stdout=sys.stdout, stderr=subprocess.STDOUT)
except OSError as exc:
    print("NOT-FOUND", exc)
"""


def _venv(root: Path) -> Path:
    bindir = root / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    (bindir / "python").symlink_to(Path(sys.executable).resolve())
    runner = bindir / "pytest"  # what pip writes for a console script: vetted, it runs
    runner.write_text(RUNNER.format(bindir=bindir))
    runner.chmod(0o755)
    (bindir / "activate").write_text("# sourced, never executed\n")
    return bindir


@requires_sandbox
@pytest.mark.parametrize("tool", TOOLS)
async def test_no_unapproved_exec_planted_venv_program_run_by_a_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tool: str) -> None:
    root, canaries = make_workspace(tmp_path)
    bindir = _venv(root)
    planted = bindir / tool
    planted.write_text(f"#!/bin/sh\necho PLANTED-{tool}\necho {tool} >> {root}/pwned-{tool}\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig())
    result = await shell.run_command(["pytest", tool], cwd=root, timeout=60, max_output_bytes=64_000, sandbox=sandbox)
    assert "RUNNER-RAN" in result.stdout, result.stdout + result.stderr  # the vetted entry point itself runs
    assert "PLANTED" not in result.stdout, result.stdout
    assert not (root / f"pwned-{tool}").exists(), "the planted program ran"
    canaries.assert_intact(state=False)


@requires_sandbox
async def test_the_venv_view_keeps_its_interpreter_entry_points_and_activate_script(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = make_workspace(tmp_path)
    bindir = _venv(root)
    (bindir / "python3").symlink_to("python")
    probe = ("import os, shutil, sys\nprint(sys.prefix)\nprint(sorted(os.listdir(sys.argv[1])))\n"
             "print(shutil.which('python3'))\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig())
    result = await shell.run_command(["python", "-c", probe, str(bindir)], cwd=root, timeout=60,
                                     max_output_bytes=64_000, sandbox=sandbox)
    lines = result.stdout.splitlines()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert lines[0] == str(root / ".venv")  # the venv is still the venv (pyvenv.cfg beside its bin)
    assert lines[1] == str(["activate", "pytest", "python", "python3"])
    assert lines[2] == str(bindir / "python3")



PLANTS = [
    pytest.param(".venv/bin/git", id="program-for-the-next-command"),
    pytest.param(".venv/bin/pytest", id="rewritten-entry-point"),
    pytest.param(".venv/bin/activate", id="line-in-activate-sourced-by-the-person"),
    pytest.param(".venv/lib/python3/site-packages/evil.pth", id="pth-file-run-by-every-later-python"),
    pytest.param(".venv/pyvenv.cfg", id="venv-config"),
]


@requires_sandbox
@pytest.mark.parametrize("rel", PLANTS)
async def test_no_unapproved_exec_planted_into_the_activated_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 rel: str) -> None:
    """The venv is part of the writable workspace, but what is written there runs later: the next
    command's children, or the person's own python outside the sandbox (a `.pth` file)."""
    root, _ = make_workspace(tmp_path)
    bindir = _venv(root)
    (root / ".venv/lib/python3/site-packages").mkdir(parents=True)
    target = root / rel
    before = target.read_bytes() if target.exists() else None
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig())
    code = "import sys\ntry:\n    open(sys.argv[1], 'a').write('import os\\n'); print('WROTE')\n" \
           "except OSError as exc:\n    print('REFUSED', exc.strerror)\n"
    result = await shell.run_command(["python", "-c", code, str(target)], cwd=root, timeout=60,
                                     max_output_bytes=64_000, sandbox=sandbox)
    assert "REFUSED" in result.stdout and "WROTE" not in result.stdout, result.stdout + result.stderr
    assert (target.read_bytes() if target.exists() else None) == before


@requires_sandbox
async def test_a_venv_made_in_the_workspace_root_leaves_the_workspace_writable(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m venv .` in the project: the venv's parts are read-only, the project's files are not."""
    root, _ = make_workspace(tmp_path)
    (root / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    (root / "lib" / "python3" / "site-packages").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "bin" / "python").symlink_to(Path(sys.executable).resolve())
    (root / "bin" / "git").write_text("#!/bin/sh\necho PLANTED\n")
    (root / "bin" / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}")
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig())
    code = ("import subprocess, sys\nsubprocess.run(['git', '--version'])\n"
            "for p in sys.argv[1:]:\n    try:\n        open(p, 'a').write('x\\n'); print('WROTE', p)\n"
            "    except OSError:\n        print('REFUSED', p)\n")
    pth, source = root / "lib/python3/site-packages/evil.pth", root / "src/app.py"
    result = await shell.run_command(["python", "-c", code, str(pth), str(source)], cwd=root, timeout=60,
                                     max_output_bytes=64_000, sandbox=sandbox)
    assert "PLANTED" not in result.stdout, result.stdout
    assert f"REFUSED {pth}" in result.stdout and f"WROTE {source}" in result.stdout, result.stdout + result.stderr
