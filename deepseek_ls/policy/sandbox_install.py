"""What a sandboxed command sees of deepseek-ls's own installation: the programs we run there.

The sandbox hides the home directory and replaces `/tmp` (`policy/sandbox.py`,
`policy/sandbox_home.py`), and deepseek-ls itself may live in either: a pipx or `uv tool` venv
under `~/.local`, a venv under `/tmp`, an editable checkout under `~/src`, started by its absolute
path with its `bin` on `PATH` or not. The programs we start confined must still run there: our
interpreter (the Hetun helper block runs `child.py` with it), the bundled `rg` (`fs.search_rg`)
and `git` (the git tools). So these are bound back, read-only, and nothing beside them:

- every symbolic link from `sys.executable` to the file it names, recreated (a venv's `python`
  -> `python3.11` -> the base interpreter; a python-build-standalone interpreter finds its
  library relative to the path it was started by);
- the base installation (`sys.base_prefix`: `~/.pyenv/versions/3.11.7`,
  `~/.local/share/uv/python/cpython-3.12…`) whole when it is a directory of its own; when it is
  or holds a home directory, `/tmp` or the workspace (`./configure --prefix=$HOME`), only what
  Python runs with: its standard library directories, its executable and shared library;
- of a virtualenv (`sys.prefix`), only `pyvenv.cfg` and the site-packages directories on
  `sys.path` (pipx's shared libraries too) — never the whole venv, which may be a directory of
  the person's own files (`python -m venv ~`, a venv made in a project's root);
- the package's own directory (`deepseek_ls/`: for an editable install that is the checkout's
  source, not the rest of the checkout — its `.git`, an `.env`, notes stay hidden);
- `rg` where the `ripgrep` distribution installed it (else the one on `PATH`) and the `git` on
  `PATH`: the file, and a `git`'s installation (`<prefix>/bin/git` with `<prefix>/libexec`) when
  that is a directory of its own.

Only what the sandbox would hide is bound (under a hidden home, `/tmp` or a directory hidden for
its sockets such as `/var/tmp`, outside what is shown already); a part inside the workspace is
the workspace's. Being read-only, none of it can be changed by one command for the next, nor for
deepseek-ls itself.

Why nothing secret of the person is shown: every path above is one the running interpreter
imports or executes, found from the interpreter itself (`sys`, `sysconfig`, the installed
distribution's file list), not from where it happens to live; directories are bound only when
they are Python's or a package manager's own (a standard library, a site-packages, our package),
and a directory that is or holds a home directory is never bound whole.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import deepseek_ls
from deepseek_ls.policy.sandbox_home import TMP



@dataclass(frozen=True)
class OwnInstall:
    """Where the running deepseek-ls lives (`running()`); tests build other layouts."""

    executable: Path  # sys.executable, as it was started (links not followed)
    prefix: Path  # sys.prefix: the virtualenv, or the base installation
    base_prefix: Path  # sys.base_prefix
    python_parts: tuple[Path, ...]  # what of base_prefix Python runs with, for a base_prefix not bound whole
    site_dirs: tuple[Path, ...]  # site-packages directories on sys.path
    package_dir: Path  # deepseek_ls/
    rg: Path | None = None  # the bundled ripgrep
    programs: tuple[Path, ...] = field(default=())  # other programs of ours run confined (git)

    @classmethod
    def running(cls) -> "OwnInstall":
        """This process's installation (without the PATH programs: see `with_programs`)."""
        return _running()

    def with_programs(self, programs: Iterable[Path]) -> "OwnInstall":
        return OwnInstall(self.executable, self.prefix, self.base_prefix, self.python_parts, self.site_dirs,
                          self.package_dir, self.rg, tuple(programs))

    def program_files(self) -> list[Path]:
        """The programs of ours we start, as named (a venv's bin in the workspace keeps them in its view)."""
        return [self.executable, *([self.rg] if self.rg else []), *self.programs]


@lru_cache(maxsize=1)
def _running() -> OwnInstall:
    base = Path(sys.base_prefix)
    stdlib = [Path(p) for p in sys.path if p and os.path.isabs(p) and _below(Path(p), base)]
    exe = [Path(p) for p in {os.path.realpath(sys.executable), os.path.realpath(getattr(sys, "_base_executable", ""))}
           if p and os.path.isfile(p)]
    libs: list[Path] = []
    library, libdir = sysconfig.get_config_var("LDLIBRARY"), sysconfig.get_config_var("LIBDIR")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and library and libdir:
        lib = Path(libdir) / library
        libs = [p for p in {lib, Path(os.path.realpath(lib))} if p.is_file()]
    sites = [Path(p) for p in sys.path if p and os.path.isabs(p) and Path(p).name in ("site-packages", "dist-packages")
             and os.path.isdir(p)]
    return OwnInstall(
        executable=Path(sys.executable), prefix=Path(sys.prefix), base_prefix=base,
        python_parts=tuple(dict.fromkeys([*stdlib, *exe, *libs])), site_dirs=tuple(sites),
        package_dir=Path(deepseek_ls.__file__).resolve().parent, rg=bundled_rg(),
    )


@lru_cache(maxsize=1)
def bundled_rg() -> Path | None:
    """The `rg` the `ripgrep` distribution installed beside our packages (its `bin/rg`), wherever
    that is: found from its file list, so neither `PATH` nor the venv's layout matters."""
    try:
        files = importlib.metadata.distribution("ripgrep").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == "rg" and entry.parent.name == "bin":
            path = Path(os.path.normpath(entry.locate()))
            if path.is_file():
                return path
    return None


@dataclass(frozen=True)
class InstallView:
    args: list[str]  # bwrap arguments: read-only binds and recreated links
    paths: list[Path]  # what they show (the command needs them: no socket cover hides them)


def view(install: OwnInstall, *, hidden: Iterable[Path], homes: Iterable[Path], visible: Iterable[Path],
         root: Path) -> InstallView:
    """The bwrap arguments that show `install` in a sandbox that hides `hidden` (the home
    directories, the socket directories; `/tmp` always) but shows `visible` (the workspace, what is
    bound back). `homes`: every home directory, also one under /tmp (never bound whole). Put them
    after the homes' and the workspace's own mounts."""
    gone = [*map(_real, hidden), TMP]
    shown = list({q for v in visible for q in (Path(os.path.abspath(v)), _real(v))})  # a link: itself and its target
    forbidden = [*{_real(h) for h in homes}, TMP, Path("/"), root]  # never bound whole, nor what holds them

    def needed(path: Path) -> bool:
        return any(_below(path, g) for g in gone) and not any(_below(path, s) for s in shown)

    def whole(directory: Path) -> bool:
        return not any(_below(f, directory) for f in forbidden)

    binds: list[Path] = []
    links: list[tuple[str, Path]] = []
    for program in [install.executable, *([install.rg] if install.rg else []), *install.programs]:
        chain, _ = _links(program)
        links += chain
    base = _real(install.base_prefix)
    binds += [base] if whole(base) else [_real(p) for p in install.python_parts]
    if _real(install.prefix) != base:
        binds.append(_real(install.prefix) / "pyvenv.cfg")
    binds += [_real(d) for d in install.site_dirs if whole(_real(d))]
    if whole(_real(install.package_dir)):
        binds.append(_real(install.package_dir))
    if install.rg is not None:
        binds.append(_real(install.rg))
    for program in install.programs:
        binds.append(_installation(_real(program), whole))
    # Outermost first; what lies inside a bound directory comes with it.
    kept: list[Path] = []
    for path in sorted(dict.fromkeys(binds), key=lambda p: (len(p.parts), str(p))):
        if (path.exists() and needed(path) and not path.is_relative_to(root)
                and not any(_below(path, k) for k in kept)):
            kept.append(path)
    args: list[str] = []
    for path in kept:
        args += ["--ro-bind", str(path), str(path)]
    made: list[Path] = []
    for target, link in links:
        if needed(link) and not link.is_relative_to(root) and not any(_below(link, k) for k in kept) \
                and link not in made:
            made.append(link)
            args += ["--symlink", target, str(link)]
    return InstallView(args, [*kept, *made])


@lru_cache(maxsize=16)
def host_programs(path: str) -> tuple[Path, ...]:
    """The programs of ours found on `path` (the host's PATH, outside any workspace) that run in
    the sandbox: git, and rg when no `ripgrep` package installed one (`tools/search.py`)."""
    names = ["git", *(["rg"] if bundled_rg() is None else [])]
    return tuple(Path(found) for found in (shutil.which(name, path=path) for name in names) if found)


def _links(path: Path) -> tuple[list[tuple[str, Path]], Path]:
    """Every symbolic link met resolving `path` component by component, as (target, link), and the
    file it names."""
    links: list[tuple[str, Path]] = []
    todo = Path(os.path.abspath(path))
    for _ in range(40):  # the kernel's own limit on links followed
        current = Path("/")
        parts = todo.parts[1:]
        for i, part in enumerate(parts):
            step = current / part
            if step.is_symlink():
                target = os.readlink(step)
                links.append((target, step))
                todo = Path(os.path.normpath(os.path.join(current, target, *parts[i + 1:])))
                break
            current = step
        else:
            return links, todo
    return links, todo


def _installation(program: Path, whole: Callable[[Path], bool]) -> Path:
    """A program's installation directory when it has one of its own (`<prefix>/bin/git` beside
    `<prefix>/libexec`), else the file alone."""
    prefix = program.parent.parent
    if program.parent.name == "bin" and (prefix / "libexec").is_dir() and whole(prefix):
        return prefix
    return program


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _below(path: Path, directory: Path) -> bool:
    return path == directory or path.is_relative_to(directory)
