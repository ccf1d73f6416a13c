"""The sandbox shows deepseek-ls's own programs wherever they are installed, and nothing beside them.

The sandbox hides the home directory and replaces /tmp; deepseek-ls may be installed in either (a
pipx or `uv tool` venv, a venv under /tmp, an editable checkout), its bin on PATH or not. The
bwrap cases hide the running installation itself (the sandbox's home is made the venv, or the
editable checkout) with a PATH that names none of it: our interpreter still runs and imports our
packages, `fs.search_rg` still finds, the Hetun helper block still answers — and what lies beside
the install (the venv's `activate`, the checkout's README and `.git`) stays hidden. On the old
code each failed with `bwrap: execvp …/python: No such file or directory` (rg: no matches).

The `view` cases check the decisions on layouts built for them: a venv made in the home, a
Python built into the home, an install inside the workspace or in plain sight.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, make_workspace

from deepseek_ls.agent.hetun import runner
from deepseek_ls.config_models import Config, HetunHelperConfig, PolicyConfig, SandboxConfig
from deepseek_ls.policy import sandbox_home
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.policy.sandbox_install import OwnInstall, view
from deepseek_ls.tools import shell
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI

requires_bwrap = pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")

OWN = OwnInstall.running()
BWRAP = shutil.which("bwrap")


def _editable_checkout() -> Path:
    parent = OWN.package_dir.parent
    if parent.name in ("site-packages", "dist-packages"):
        pytest.skip("deepseek-ls is not an editable install here (the install tests cover that layout)")
    return parent


# Where the installation the tests run from is hidden by making it the sandbox's home directory.
LAYOUTS = [
    pytest.param(lambda: Path(sys.prefix).resolve(), id="venv-is-the-home"),
    pytest.param(lambda: _editable_checkout().resolve(), id="editable-checkout-is-the-home"),
]


@pytest.fixture(params=LAYOUTS)
def hidden_install(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sandbox home to use: the directory holding the running install. PATH names nothing under
    the home or ~/.pyenv, and no toolchain variable either: nothing of ours is shown by accident."""
    home = request.param()
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    for name in sandbox_home.TOOLCHAIN_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


def confined(root: Path, home: Path) -> Sandbox:
    return Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig(bwrap_path=BWRAP), home=home)


def own_entries(home: Path) -> set[str]:
    """The names directly in `home` that lead to a part of our install."""
    parts = [OWN.executable, OWN.prefix / "pyvenv.cfg", *OWN.site_dirs, OWN.package_dir, *([OWN.rg] if OWN.rg else [])]
    return {p.resolve().relative_to(home).parts[0] for p in parts if p.resolve().is_relative_to(home)} | {
        p.relative_to(home).parts[0] for p in parts if p.is_relative_to(home)}


LOOK = """
import json, os, sys
import deepseek_ls.policy.sandbox  # our package and its dependencies (pydantic, platformdirs)
home = sys.argv[1]
print(json.dumps({"entries": sorted(os.listdir(home)),
                  "activate": os.path.exists(os.path.join(sys.prefix, "bin", "activate"))}))
"""


@requires_bwrap
async def test_own_interpreter_and_packages_run_confined_when_the_install_is_hidden(
        tmp_path: Path, hidden_install: Path) -> None:
    root, _ = make_workspace(tmp_path)
    result = await shell.run_command([sys.executable, "-c", LOOK, str(hidden_install)], cwd=root, timeout=60,
                                     max_output_bytes=64_000, sandbox=confined(root, hidden_install))
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    # Only what leads to our install is there; the host has more (else this would prove nothing).
    assert set(seen["entries"]) <= own_entries(hidden_install), seen
    assert set(os.listdir(hidden_install)) - own_entries(hidden_install)
    if hidden_install == Path(sys.prefix).resolve():
        assert not seen["activate"] and (Path(sys.prefix) / "bin" / "activate").exists()


@requires_bwrap
async def test_search_finds_when_the_install_is_hidden(tmp_path: Path, hidden_install: Path) -> None:
    root, _ = make_workspace(tmp_path)
    host = ToolHost(root, Config(), ui=AutoApproveUI("allow_once"))
    host.sandbox = confined(root, hidden_install)
    out = await host.call("fs.search_rg", {"query": "return a"})
    assert out.ok, out
    assert [m["path"] for m in out.value["matches"]] == ["src/app.py"]


@requires_bwrap
async def test_helper_block_answers_when_the_install_is_hidden(tmp_path: Path, hidden_install: Path) -> None:
    root, _ = make_workspace(tmp_path)
    config = HetunHelperConfig(timeout_seconds=30, cpu_seconds=5, memory_mb=256, max_loop_iterations=1000)

    class NoHelpers:
        async def serve(self, name, args, kwargs):
            raise ValueError(f"{name} refused")

    run = await runner.run_block("result(20 + 22)", NoHelpers(), config, sandbox=confined(root, hidden_install))
    assert run.ok and run.result == 42, run.error


@requires_bwrap
def test_own_install_under_var_tmp_runs_while_var_tmp_stays_hidden(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """/var/tmp is hidden whole (anyone may bind a socket there): a venv of ours there is bound back
    into it, and nothing beside it is shown. On the old code: execvp …/python: No such file."""
    base = Path(tempfile.mkdtemp(prefix="dsls-own-install-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")], check=True, timeout=120)
    (base / "notes.txt").write_text("canary")
    python = base / "venv" / "bin" / "python"
    install = OwnInstall(executable=python, prefix=base / "venv", base_prefix=OWN.base_prefix,
                         python_parts=OWN.python_parts, site_dirs=(), package_dir=OWN.package_dir, rg=None)
    root, _ = make_workspace(tmp_path)
    box = Sandbox(root, config=SandboxConfig(bwrap_path=BWRAP), install=install)
    code = f"import os, sys; print(sys.prefix, os.path.exists({str(base / 'notes.txt')!r}))"
    done = subprocess.run(box.wrap([str(python), "-I", "-c", code]), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(base / "venv"), "False"]


# -- the decisions, on layouts made for them (no bwrap needed) ------------------------------------


def _tree(base: Path) -> dict[str, Path]:
    """A Python-like installation at `base`: bin/python3.11, lib/python3.11/os.py."""
    (base / "bin").mkdir(parents=True, exist_ok=True)
    (base / "lib" / "python3.11" / "lib-dynload").mkdir(parents=True, exist_ok=True)
    (base / "lib" / "python3.11" / "os.py").write_text("")
    exe = base / "bin" / "python3.11"
    exe.write_text("")
    return {"exe": exe, "stdlib": base / "lib" / "python3.11", "dynload": base / "lib" / "python3.11" / "lib-dynload"}


def _venv(prefix: Path, base_exe: Path) -> OwnInstall:
    (prefix / "bin").mkdir(parents=True, exist_ok=True)
    (prefix / "pyvenv.cfg").write_text(f"home = {base_exe.parent}\n")
    site = prefix / "lib" / "python3.11" / "site-packages"
    (site / "deepseek_ls").mkdir(parents=True)
    (prefix / "bin" / "python3.11").symlink_to(base_exe)
    (prefix / "bin" / "python").symlink_to("python3.11")
    (prefix / "bin" / "rg").write_bytes(b"\x7fELF")
    base = base_exe.parent.parent
    return OwnInstall(executable=prefix / "bin" / "python", prefix=prefix, base_prefix=base,
                      python_parts=(base / "lib" / "python3.11", base_exe), site_dirs=(site,),
                      package_dir=site / "deepseek_ls", rg=prefix / "bin" / "rg")


def _shown(args: list[str]) -> tuple[list[Path], list[tuple[str, Path]]]:
    binds = [Path(args[i + 2]) for i, a in enumerate(args) if a == "--ro-bind"]
    links = [(args[i + 1], Path(args[i + 2])) for i, a in enumerate(args) if a == "--symlink"]
    return binds, links


def _assert_hidden(args: list[str], *paths: Path) -> None:
    binds, links = _shown(args)
    for path in paths:
        assert not any(path == b or path.is_relative_to(b) for b in binds), (path, binds)
        assert path not in [link for _, link in links]


def test_no_leak_home_when_a_venv_is_the_home(tmp_path: Path) -> None:
    """`python -m venv ~`: the venv's parts are shown, not the home they lie in."""
    home = tmp_path / "home"
    base = _tree(tmp_path / "pythons" / "3.11")
    install = _venv(home, base["exe"])
    for secret in ("notes.txt", ".env", "bin/deploy-token.sh", "lib/private.py"):
        (home / secret).write_text("canary")
    args = view(install, hidden=[home], homes=[home], visible=[], root=tmp_path / "ws").args
    binds, links = _shown(args)
    assert home / "pyvenv.cfg" in binds and install.site_dirs[0] in binds and home / "bin" / "rg" in binds
    assert ("python3.11", home / "bin" / "python") in links
    assert (str(base["exe"]), home / "bin" / "python3.11") in links
    assert (tmp_path / "pythons" / "3.11") in binds  # a base installation of its own: whole
    _assert_hidden(args, home / "notes.txt", home / ".env", home / "bin" / "deploy-token.sh", home / "lib" / "private.py")


def test_no_leak_home_when_python_is_built_into_the_home(tmp_path: Path) -> None:
    """`./configure --prefix=$HOME`: only what Python runs with, never the whole home."""
    home = tmp_path / "home"
    base = _tree(home)
    install = _venv(tmp_path / "venvs" / "ds", base["exe"])
    (home / "notes.txt").write_text("canary")
    (home / "lib" / "private.py").write_text("canary")
    args = view(install, hidden=[home], homes=[home], visible=[], root=tmp_path / "ws").args
    binds, _ = _shown(args)
    assert base["stdlib"] in binds and base["exe"] in binds
    _assert_hidden(args, home / "notes.txt", home / "lib" / "private.py")


def test_own_install_bound_whole_never_when_it_holds_the_workspace(tmp_path: Path) -> None:
    base = _tree(tmp_path / "python")
    install = _venv(tmp_path / "venv", base["exe"])
    root = tmp_path / "python" / "work"
    root.mkdir()
    args = view(install, hidden=[], homes=[], visible=[root], root=root).args
    binds, _ = _shown(args)
    assert tmp_path / "python" not in binds and base["stdlib"] in binds


def test_own_install_inside_the_workspace_is_left_to_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    base = _tree(root / "python")
    install = _venv(root / ".venv", base["exe"])
    assert view(install, hidden=[], homes=[], visible=[root], root=root).args == []


def test_own_install_in_plain_sight_binds_nothing() -> None:
    """/usr and /opt are shown by the sandbox's read-only / already."""
    install = OwnInstall(executable=Path("/usr/bin/env"), prefix=Path("/usr"), base_prefix=Path("/usr"),
                         python_parts=(), site_dirs=(), package_dir=Path("/usr/lib"), rg=None)
    assert view(install, hidden=[Path("/root")], homes=[Path("/root")], visible=[], root=Path("/srv/ws")).args == []


def test_own_rg_stays_in_the_view_of_a_workspace_venv(tmp_path: Path) -> None:
    """deepseek-ls run from a venv inside the workspace it works on, that venv's bin on PATH: the
    vetted view of that bin (policy/sandbox_venv.py) keeps our bundled rg, a native program."""
    root = tmp_path / "ws"
    base = _tree(tmp_path / "python")
    install = _venv(root / ".venv", base["exe"])
    box = Sandbox(root, config=SandboxConfig(bwrap_path="/usr/bin/bwrap"), home=tmp_path / "home", install=install)
    args = box.wrap(["true"], exec_path=f"{root / '.venv' / 'bin'}:/usr/bin:/bin")
    tmpfs = args.index("--tmpfs", args.index(str(root)))
    assert args[tmpfs + 1] == str((root / ".venv" / "bin").resolve())
    assert str((root / ".venv" / "bin" / "rg").resolve()) in args[tmpfs:]


def test_interpreter_link_chain_through_a_linked_directory(tmp_path: Path) -> None:
    """A venv reached through a link (`~/.venvs/current` -> `~/.venvs/ds-1.2`): each link is made again."""
    home = tmp_path / "home"
    base = _tree(tmp_path / "python")
    real = _venv(home / ".venvs" / "ds-1.2", base["exe"])
    (home / ".venvs" / "current").symlink_to("ds-1.2")
    install = OwnInstall(executable=home / ".venvs" / "current" / "bin" / "python", prefix=home / ".venvs" / "current",
                         base_prefix=real.base_prefix, python_parts=real.python_parts, site_dirs=real.site_dirs,
                         package_dir=real.package_dir, rg=real.rg)
    _, links = _shown(view(install, hidden=[home], homes=[home], visible=[], root=tmp_path / "ws").args)
    assert links[0] == ("ds-1.2", home / ".venvs" / "current")
    assert ("python3.11", home / ".venvs" / "ds-1.2" / "bin" / "python") in links


def test_sandbox_shows_the_install_it_was_given(tmp_path: Path) -> None:
    """What `Sandbox.wrap` adds for an install in a hidden home: after the home's tmpfs, read-only."""
    home = tmp_path / "home"
    home.mkdir()
    base = _tree(tmp_path / "python")
    install = _venv(home / ".local" / "share" / "pipx" / "venvs" / "deepseek-ls", base["exe"])
    root = tmp_path / "ws"
    root.mkdir()
    args = Sandbox(root, config=SandboxConfig(bwrap_path="/usr/bin/bwrap"), home=home, install=install).wrap(["true"])
    site = str(install.site_dirs[0])
    assert args.index(site) > args.index(str(root)) and args[args.index(site) - 1] == "--ro-bind"

