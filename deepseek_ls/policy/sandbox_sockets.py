"""The Unix sockets a sandboxed command must not reach.

No network (`--unshare-net`) stops TCP and, since abstract Unix socket names belong to the
network namespace, abstract sockets too (`@/tmp/.X11-unix/X0`, `@dbus-...`). A socket bound to a
*path* is another matter: `connect()` needs only the path, a read-only mount does not stop it,
and behind one may be an ssh-agent (sign as the person), a docker or podman daemon (root on the
machine), a desktop session bus, an editor's server, a database. The sandbox's own `/tmp`, `/run`
and empty home hide the usual places; every other path-bound socket this machine has (the
kernel lists them in `/proc/net/unix`) is covered with an empty file, so `connect()` is refused.

The list is read when the command line is built: a socket bound later is not in it, nor one
bound in another network namespace (a container's) whose path we see.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

PROC_NET_UNIX = Path("/proc/net/unix")
# Replaced by the sandbox's own (`--tmpfs`, `--dev`, `--proc`): their sockets are gone there anyway.
_REPLACED = (Path("/tmp"), Path("/run"), Path("/dev"), Path("/proc"))


def bound_socket_paths(table: Path = PROC_NET_UNIX) -> list[Path]:
    """The paths of the Unix sockets bound in this network namespace that still exist as sockets."""
    try:
        lines = table.read_text(encoding="utf-8", errors="surrogateescape").splitlines()[1:]
    except OSError:
        return []
    found: list[Path] = []
    seen: set[str] = set()
    for line in lines:
        # Num RefCount Protocol Flags Type St Inode Path -- the path may hold spaces; abstract ones start with '@'.
        fields = line.split(maxsplit=7)
        if len(fields) < 8 or not fields[7].startswith("/") or fields[7] in seen:
            continue
        seen.add(fields[7])
        path = Path(fields[7])
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.append(path)
        except OSError:
            continue  # deleted, or a directory we cannot see into
    return found


def inside(paths: Iterable[Path], table: Path = PROC_NET_UNIX) -> list[Path]:
    """The bound sockets inside `paths` (directories or files bound back into a hidden directory)."""
    places = [str(p) for p in paths]
    if not places:
        return []
    return [sock for sock in bound_socket_paths(table) if _under(str(sock), places)]


# Where anyone may bind a socket, outside the places the sandbox replaces.
ALWAYS_HIDDEN = (Path("/var/tmp"),)


@dataclass(frozen=True)
class SocketCover:
    directories: list[Path]  # hidden whole (an empty tmpfs), before anything is bound back
    sockets: list[Path]  # covered one by one (an empty file), after everything is bound


def cover(hidden: Iterable[Path], visible: Iterable[Path], *, keep: Iterable[Path] = (),
          env: Mapping[str, str] | None = None, table: Path = PROC_NET_UNIX) -> SocketCover:
    """How a sandbox that replaces /tmp, /run, /dev and /proc and hides `hidden` (the home
    directories), but binds `visible` back (the workspace, writable paths, toolchains), keeps the
    machine's sockets out of reach. `keep`: directories the command needs (PATH), never hidden."""
    # Plain string prefixes: this runs for every command, and pathlib's is_relative_to is slow.
    gone = [str(p) for p in [*_REPLACED, *hidden]]
    shown = [str(p) for p in visible]
    needed = [_resolved(p) for p in [*shown, *keep]]
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    directories: list[str] = []
    for candidate in (*ALWAYS_HIDDEN, *([Path(runtime)] if os.path.isabs(runtime) else [])):
        where = _hideable(str(candidate), gone, needed)
        if where is not None and where not in directories:
            directories.append(where)
    sockets: list[Path] = []
    for path in bound_socket_paths(table):
        text = str(path)
        inside_shown = _under(text, shown)
        if not inside_shown and _under(text, [*gone, *directories]):
            continue
        where = None if inside_shown else _hideable(os.path.dirname(text), gone, needed)
        if where is None:
            sockets.append(path)
        elif where not in directories:
            directories.append(where)
    # Outermost first: one inside another is hidden with it.
    directories.sort(key=lambda d: d.count("/"))
    outer = [d for i, d in enumerate(directories) if not _under(d, directories[:i])]
    return SocketCover([Path(d) for d in outer], sockets)


def _under(path: str, places: Iterable[str | None]) -> bool:
    return any(p is not None and (path == p or path.startswith(p.rstrip("/") + "/")) for p in places)


def _hideable(directory: str, gone: list[str], needed: list[str | None]) -> str | None:
    """`directory` (resolved) when an empty tmpfs may replace it in the sandbox, else None: not a
    top-level directory, not one the sandbox replaces anyway, none holding what the command needs."""
    directory = os.path.realpath(directory)
    if directory.count("/") < 2 or not os.path.isdir(directory) or _under(directory, gone):
        return None
    if any(path is None or _under(path, [directory]) for path in needed):
        return None
    return directory


def _resolved(path: Path | str) -> str | None:
    try:
        return os.path.realpath(path, strict=False)
    except (OSError, ValueError):
        return None  # cannot tell where it is: nothing is hidden for fear of hiding it
