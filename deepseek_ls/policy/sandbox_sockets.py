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
from collections.abc import Iterable
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


def sockets_to_mask(hidden: Iterable[Path], visible: Iterable[Path], table: Path = PROC_NET_UNIX) -> list[Path]:
    """The bound sockets a sandbox would still show: it replaces /tmp, /run, /dev and /proc and hides
    the directories in `hidden` (the home directories), but binds `visible` back (the workspace,
    writable paths, toolchains), wherever they are."""
    gone = [*_REPLACED, *hidden]
    shown = list(visible)
    return [p for p in bound_socket_paths(table)
            if not any(p.is_relative_to(g) for g in gone) or any(p.is_relative_to(v) for v in shown)]
