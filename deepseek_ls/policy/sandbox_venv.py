"""What a sandboxed command sees of a virtualenv bin directory inside the workspace.

The person may have activated a virtualenv that lives in the repository (`PATH=/repo/.venv/bin:...`).
`resolve_program` already takes from it only the venv's interpreter and pip's entry points for the
program we start; but that program's own children (pytest running `git`, a build running `sh`)
look names up on the same PATH, and the repository (or an earlier sandboxed command: the workspace
is writable) chooses what else lies in that directory. So inside the sandbox each such directory
is an empty read-only tmpfs with only these bound back, at their own paths (the venv stays a venv:
`pyvenv.cfg` is beside its bin, entry points' `#!` lines still name its python):

- the programs `resolve_program` would take: the interpreter links leading outside the workspace
  and the entry points whose `#!` line runs this venv's python;
- regular files that are not executable (`activate`, `activate.fish`: sourced, never run).

Anything else (a planted `git`, a link to `/bin/sh`) is not there, so a lookup falls through to the
next PATH directory: the system's program. The whole virtualenv is read-only in the sandbox too:
a command could otherwise write an entry point with the right `#!` line for the next command to
vet, or a `.pth` file in its site-packages (or an `activate` line) that runs the next time the
person uses the venv — outside the sandbox. The view is chosen when the command line is built;
files are bound by path when the command starts.

A native program pip put there (`ruff`, `uv`) has no `#!` line to vet and is not shown either:
it looks like a planted one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from deepseek_ls.policy.env import is_virtualenv_program, workspace_venv_bins


def venv_views(exec_path: str | None, *, root: Path, keep: Iterable[Path] = ()) -> list[str]:
    """bwrap arguments that replace each in-workspace virtualenv bin on `exec_path` by its vetted view.
    They must follow the workspace's own bind (the views lie inside it). `keep`: programs of ours
    (deepseek-ls installed in that very venv: its bundled `rg`), shown too."""
    args: list[str] = []
    ours = {os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p)) for p in keep}
    for bindir in workspace_venv_bins(exec_path, workspace=root):
        kept = _vetted(bindir, root, ours)
        for part in _venv_parts(bindir.parent, root):
            args += ["--ro-bind", str(part), str(part)]
        args += ["--tmpfs", str(bindir)]
        for entry in kept:
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry), str(entry)]
            else:
                args += ["--ro-bind", str(entry), str(entry)]
        args += ["--remount-ro", str(bindir)]
    return args


def _venv_parts(venv: Path, root: Path) -> list[Path]:
    """What to make read-only of the venv: all of it, unless it is the workspace itself (a venv made
    in the project's root), whose other files stay writable: then its config and libraries."""
    if venv != root:
        return [venv]
    return [p for p in (venv / name for name in ("pyvenv.cfg", "lib", "lib64", "include"))
            if p.exists() and not p.is_symlink()]


def _vetted(bindir: Path, root: Path, ours: set[str]) -> list[Path]:
    kept: list[Path] = []
    try:
        entries = sorted(os.scandir(bindir), key=lambda e: e.name)
    except OSError:
        return kept
    for entry in entries:
        path = Path(entry.path)
        try:
            mode = os.stat(path).st_mode  # what the name leads to
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            continue
        if entry.is_symlink() or mode & 0o111:
            if entry.path in ours or is_virtualenv_program(path, workspace=root):
                kept.append(path)
        elif not entry.is_symlink():
            kept.append(path)  # activate scripts: read, never executed (the view is read-only)
    return kept
