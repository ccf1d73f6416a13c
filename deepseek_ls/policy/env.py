"""The environment commands run with: the user's, less anything that looks like a credential.

A variable is dropped when its name says it holds a secret (`*PASS*`, `*PWD`,
`*SECRET*`, `*TOKEN*`, `*KEY*`, `*AUTH*`, `*CREDENTIAL*`, `*COOKIE*`,
`*SESSION*`, `*PRIVATE*`, `*SIGNATURE*`, `*_DSN`, `DATABASE_URL`...), or when its value
does (a URL with a password, a key the redaction rules recognise). `PWD`/`OLDPWD`
(directories) are kept. `PATH` keeps only absolute directories.

Programs are found two ways. Our own (git, also when a command runs it; rg; the `bwrap`
lookup; git for 3-way merges) are looked up on `host_exec_path`: never in a directory inside a
workspace, whose files the repository chooses (a committed `.venv/bin/git`, or one a sandboxed
command wrote: the sandbox lets commands write the workspace). A command the policy let run
(`pytest -q`) may use the virtualenv the person activated inside the workspace, but
`resolve_program` takes from such a directory only that virtualenv's own interpreter and the
entry points pip wrote for it (a `#!` line naming its python): an `rg` or `ls` planted there is
passed over for the system's. What that command starts in turn looks names up on the same
PATH: `command_exec_path` keeps of the in-workspace directories only virtualenv bins, and inside the
sandbox each of those is a view holding only what `resolve_program` would take from it
(`policy/sandbox_venv.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_SECRET_NAME = re.compile(
    r"PASS|PWD|SECRET|TOKEN|KEY|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE|SIGNATURE|CERT|_DSN$|^DSN$|"
    r"DATABASE_URL|DB_URL|CONNECTION_STRING|CONN_STR|WEBHOOK|SAS_|_SAS$|API_?ID",
    re.IGNORECASE,
)
_KEEP = {"PWD", "OLDPWD", "SSH_AUTH_SOCK_DISABLED"}
# A URL carrying a user:password@ part.
_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)


def is_secret_variable(name: str, value: str) -> bool:
    if name.upper() in _KEEP:
        return False
    if _SECRET_NAME.search(name):
        return True
    from deepseek_ls.policy.redact import is_known_secret

    if is_known_secret(value.strip()):
        return True  # the API key we read, under whatever name the config gave its variable
    if _URL_CREDENTIALS.search(value):
        return True
    from deepseek_ls.policy.redact import redact_text

    return len(value) >= 16 and "[REDACTED" in redact_text(value)


def safe_exec_path(value: str | None) -> str:
    """`PATH` without its empty and relative entries (`PATH=/usr/bin:` or `.:$PATH`,
    `node_modules/.bin`): they name directories relative to where a program starts — the
    workspace, whose files the repository chooses — so `git` or `pytest` would be a file of the
    repository. Absolute entries are kept (a virtualenv the person activated)."""
    kept = [entry for entry in (value or "").split(os.pathsep) if entry and os.path.isabs(entry)]
    return os.pathsep.join(kept) or os.defpath.lstrip(os.pathsep)


# The workspaces this process works on (noted by `Sandbox`), resolved: no program of ours is found in them.
_WORKSPACES: set[str] = set()


def note_workspace(root: Path) -> None:
    """Remember `root` as a workspace: `host_exec_path` never finds a program inside it."""
    try:
        _WORKSPACES.add(str(Path(root).resolve()))
    except OSError:
        pass


def _inside(entry: str, roots: set[str]) -> bool:
    try:
        where = os.path.realpath(entry)
    except (OSError, ValueError):
        return True  # cannot tell: not trusted
    return _under(where, roots)


def _under(resolved: str, roots: set[str]) -> bool:
    """Whether `resolved` is one of `roots` or inside one. It runs for each PATH entry of every
    program lookup, and a long process notes many workspaces: its ancestors are looked up in the
    set (comparing it with every root, pathlib took ~0.1 s a lookup with a thousand)."""
    while resolved not in roots:
        parent = os.path.dirname(resolved)
        if parent == resolved:
            return False
        resolved = parent
    return True


def _roots(workspace: Path | str | None) -> set[str]:
    roots = set(_WORKSPACES)
    if workspace is not None:
        try:
            roots.add(str(Path(workspace).resolve()))
        except OSError:
            pass
    roots.discard("/")
    return roots


def host_exec_path(value: str | None = None, *, workspace: Path | str | None = None) -> str:
    """`safe_exec_path(value)` (default: this process's `PATH`) without the directories inside
    `workspace` or any noted workspace (a symlink counts where it leads): where our own programs
    (git, rg, bwrap) are looked up."""
    value = os.environ.get("PATH") if value is None else value
    roots = _roots(workspace)
    kept = [entry for entry in safe_exec_path(value).split(os.pathsep) if not _inside(entry, roots)]
    return os.pathsep.join(kept) or os.defpath.lstrip(os.pathsep)


def resolve_program(name: str, path: str | None, *, workspace: Path | str | None) -> str | None:
    """The file `name` runs as, looked up on `path` (made safe): in a directory inside the workspace
    only a virtualenv's interpreter or pip entry point is taken (see the module doc). None: not
    found. A name with a slash is returned as it is (the command policy judged it)."""
    if os.sep in name:
        return name
    roots = _roots(workspace)
    for entry in safe_exec_path(path).split(os.pathsep):
        candidate = Path(entry) / name
        if not candidate.is_file() or not os.access(candidate, os.X_OK):
            continue
        if _inside(entry, roots) and not _virtualenv_program(candidate, roots):
            continue
        return str(candidate)
    return None


def command_exec_path(path: str | None, *, workspace: Path | str | None) -> str:
    """The `PATH` a command runs with: `safe_exec_path(path)` without the directories inside the
    workspace that are not a virtualenv's bin (`/repo/bin`, `/repo/node_modules/.bin`), whose files the
    repository chooses. A virtualenv's bin stays; the sandbox shows only its vetted programs."""
    roots = _roots(workspace)
    kept = [entry for entry in safe_exec_path(path).split(os.pathsep)
            if not _inside(entry, roots) or _is_venv_bin(Path(entry))]
    return os.pathsep.join(kept) or os.defpath.lstrip(os.pathsep)


def workspace_venv_bins(path: str | None, *, workspace: Path | str | None) -> list[Path]:
    """The virtualenv bin directories inside the workspace that `path` names (resolved, in order)."""
    roots = _roots(workspace)
    found: list[Path] = []
    for entry in safe_exec_path(path).split(os.pathsep):
        resolved = os.path.realpath(entry)  # runs for every command: strings, not pathlib
        if not _under(os.path.dirname(resolved), roots):  # strictly inside a workspace
            continue
        if os.path.isfile(os.path.join(os.path.dirname(resolved), "pyvenv.cfg")) and os.path.isdir(resolved) \
                and Path(resolved) not in found:
            found.append(Path(resolved))
    return found


def is_virtualenv_program(candidate: Path, *, workspace: Path | str | None) -> bool:
    """Whether `candidate` (in a virtualenv's bin inside the workspace) is one `resolve_program` takes."""
    return _virtualenv_program(candidate, _roots(workspace))


def _is_venv_bin(directory: Path) -> bool:
    try:
        directory = directory.resolve()
    except OSError:
        return False
    return directory.is_dir() and (directory.parent / "pyvenv.cfg").is_file()


def _virtualenv_program(candidate: Path, roots: set[str]) -> bool:
    """Whether `candidate` is a virtualenv's own interpreter (a link to a python outside the
    workspace) or an entry point pip wrote for it (its `#!` line runs that virtualenv's python)."""
    bindir = candidate.parent
    if not (bindir.parent / "pyvenv.cfg").is_file():
        return False
    if candidate.is_symlink():
        try:
            target = candidate.resolve()
        except OSError:
            return False
        return target.name.startswith("python") and not _under(str(target), roots)
    try:
        with open(candidate, "rb") as fh:
            head = fh.read(512).decode("utf-8", "replace").splitlines()
    except OSError:
        return False
    if not head or not head[0].startswith("#!"):
        return False
    python = f"{bindir}/python"  # python, python3, python3.12: pip's own shebang
    if head[0][2:].strip().startswith(python):
        return True
    # pip's form for long paths: `#!/bin/sh`, then `'''exec' "/.../bin/python" "$0" "$@"`.
    return head[0].strip() == "#!/bin/sh" and len(head) > 1 and head[1].startswith("'''exec' \"" + python)


def scrubbed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) without the variables that may hold credentials, and with
    a `PATH` that only names absolute directories (`safe_exec_path`)."""
    source = dict(os.environ if env is None else env)
    out = {k: v for k, v in source.items() if not is_secret_variable(k, v)}
    if "PATH" in out:
        out["PATH"] = safe_exec_path(out["PATH"])
    return out
