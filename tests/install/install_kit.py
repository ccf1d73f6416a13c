"""Helpers for the install tests: build deepseek-ls as a user gets it and install it where users do.

The wheel (and the editable wheel) is built once per test session from a copy of this checkout's
sources (a build in the checkout would leave `build/` and `*.egg-info` there). It is installed by
pip into a fresh virtualenv, `--no-deps --no-index`: the dependencies are lent from the venv the
tests run in through a `.pth` file (as pipx lends its shared libraries), but the product's own
files — the package, its entry point, the bundled `rg` — live where a user's would.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "deepseek_ls")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info", "build")
PIP_TIMEOUT = 300


def copy_sources(dest: Path) -> Path:
    """The files a build reads, copied from this checkout to `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        source = CHECKOUT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=_IGNORE)
        else:
            shutil.copy2(source, dest / name)
    return dest


def _run(argv: list[str], *, cwd: Path | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=PIP_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def build_wheel(sources: Path, out: Path) -> Path:
    """`pip wheel` of `sources`, with this venv's setuptools (no download)."""
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-build-isolation",
          "-w", str(out), str(sources)])
    return next(out.glob("deepseek_ls-*.whl"))


def build_editable(sources: Path, out: Path) -> Path:
    """The editable wheel of `sources` (PEP 660, what `pip install -e` builds and installs)."""
    out.mkdir(parents=True, exist_ok=True)
    code = "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_editable(sys.argv[1]))"
    name = _run([sys.executable, "-c", code, str(out)], cwd=sources).strip().splitlines()[-1]
    return out / name


def make_venv(prefix: Path) -> Path:
    """A virtualenv at `prefix` (no pip in it); its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(prefix)])
    return prefix / "bin" / "python"


def site_packages(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"


def install(prefix: Path, wheel: Path) -> None:
    """pip (this venv's) installs `wheel` into the virtualenv at `prefix`, then lends it the
    dependencies and copies the `ripgrep` distribution in (its `bin/rg` is the product's own)."""
    _run([sys.executable, "-m", "pip", "--python", str(prefix / "bin" / "python"), "install", "-q", "--no-deps",
          "--no-index", "--no-compile", str(wheel)])
    site = site_packages(prefix)
    lent = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    (site / "zz_lent_dependencies.pth").write_text("".join(f"{p}\n" for p in lent))
    copy_distribution("ripgrep", site, programs=True)


def uv_tool_install(home: Path, wheel: Path) -> Path:
    """`uv tool install` of `wheel` as a person's uv does it (its tools and link directories under
    `home`), offline: the product's requirements are excluded from the resolution and lent as for
    `install`. The tool's virtualenv."""
    from uv import find_uv_bin

    tools, links = home / ".local" / "share" / "uv" / "tools", home / ".local" / "bin"
    excludes = home / "uv-excludes.txt"
    excludes.write_text("".join(f"{name}\n" for name in requirements("deepseek-ls")[1:]))
    env = {**os.environ, "UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(links),
           "UV_CACHE_DIR": str(home / ".cache" / "uv"), "HOME": str(home)}
    done = subprocess.run([find_uv_bin(), "tool", "install", "--offline", "--no-index", "--excludes", str(excludes),
                           "--python", sys.executable, "--no-managed-python", str(wheel)],
                          env=env, capture_output=True, text=True, timeout=PIP_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"uv tool install failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    prefix = tools / "deepseek-ls"
    site = site_packages(prefix)
    lent = [p for p in sys.path if p.endswith("-packages") and os.path.isdir(p)]
    (site / "zz_lent_dependencies.pth").write_text("".join(f"{p}\n" for p in lent))
    copy_distribution("ripgrep", site, programs=True)
    return prefix


def copy_distribution(name: str, site: Path, *, programs: bool = False) -> None:
    """The files of the installed distribution `name` copied to the same place relative to `site`:
    its modules and metadata, and with `programs` what it put in `bin/` (ripgrep's `rg`)."""
    dist = importlib.metadata.distribution(name)
    for entry in dist.files or []:
        source = Path(entry.locate())
        if not source.is_file() or (entry.parts[0] == ".." and not programs):
            continue
        target = Path(os.path.normpath(site / entry))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def packages_for_pytest(dest: Path) -> Path:
    """A site-packages directory holding pytest and what it needs (copied from this venv)."""
    for name in requirements("pytest"):
        copy_distribution(name, dest)
    return dest


def project_venv(workspace: Path, packages: Path) -> Path:
    """The workspace's own `.venv` with `packages` (`packages_for_pytest`) in its site-packages, hard-linked
    (quick; the sandbox and pytest read them as any file): what verification runs. Its bin."""
    make_venv(workspace / ".venv")
    shutil.copytree(packages, site_packages(workspace / ".venv"), copy_function=_link_or_copy, dirs_exist_ok=True)
    return workspace / ".venv" / "bin"


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def requirements(name: str) -> list[str]:
    """`name` and the distributions it needs here (its requirements' markers evaluated), recursively."""
    from packaging.requirements import Requirement

    found: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.append(current)
        for line in importlib.metadata.requires(current) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def exec_path(*first: Path) -> str:
    """This process's PATH without the venv the tests run from (a user's PATH never has it), after `first`."""
    ours = os.path.realpath(os.path.dirname(sys.executable))
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and os.path.realpath(p) != ours]
    return os.pathsep.join([*map(str, first), *rest])
