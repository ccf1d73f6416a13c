"""Open workspace files without following links, and check what was opened.

`PathPolicy.resolve` says where a path leads *now*; by the time the file is
opened a component may have been swapped for a symlink that leads outside. So
every read and write of a workspace file goes through here: the path is
resolved once (symlinks inside the workspace stay usable), then opened
component by component from a descriptor on the workspace root with
`O_NOFOLLOW` on each step, and the opened file itself is checked with `fstat`:
a regular file with exactly one link (a hard link can share an inode with a
file outside the workspace, and no path check can see that).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from deepseek_ls.policy.errors import PolicyViolation

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def real_relative(root: Path, rel: str) -> str:
    """`rel` with the workspace's own symlinks resolved, as a root-relative POSIX path."""
    root = Path(root).resolve()
    target = (root / rel).resolve(strict=False)
    if target == root or not target.is_relative_to(root):
        raise PolicyViolation(rel, "symlink_escape", "it resolves outside the workspace root")
    return target.relative_to(root).as_posix()


def _open_dir(root: Path, parts: list[str], *, create: bool = False) -> int:
    """A descriptor on root/parts..., walked without following any symlink."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                # O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR (or ELOOP).
                if exc.errno in (errno.ENOTDIR, errno.ELOOP) and stat.S_ISLNK(
                    os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                ):
                    raise OSError(errno.ELOOP, "a directory component is a symlink") from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _refuse_link_errors(rel: str, exc: OSError) -> PolicyViolation:
    return PolicyViolation(rel, "link_race", f"a component of the path changed into a link while it was opened ({exc.strerror})")


def check_opened(rel: str, st: os.stat_result) -> None:
    """Refuse what a path check cannot see: not a regular file, or hard-linked."""
    if not stat.S_ISREG(st.st_mode):
        raise PolicyViolation(rel, "not_regular_file", "it is not a regular file")
    if st.st_nlink != 1:
        raise PolicyViolation(
            rel, "hard_link", f"the file has {st.st_nlink} hard links; one may lead outside the workspace"
        )


def open_read(root: Path, rel: str) -> int:
    """A read-only descriptor on workspace file `rel`, opened without following links and checked."""
    real = real_relative(root, rel)
    *dirs, name = real.split("/")
    try:
        dfd = _open_dir(Path(root).resolve(), dirs)
    except NotADirectoryError as exc:
        raise FileNotFoundError(f"{rel} does not exist") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a directory component is now a symlink
            raise _refuse_link_errors(rel, exc) from None
        raise
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse_link_errors(rel, exc) from None
            raise
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{rel} is a directory")
        check_opened(rel, st)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes_no_links(real_root: str, rel: str) -> bytes:
    """The bytes of `rel` under `real_root` (already resolved), for a path that passes
    through no link (the code index's: its walk never follows one): each component is
    opened with `O_NOFOLLOW`, so a link met now (one swapped in since) is refused, not
    followed; the file is `check_opened`. Without `open_read`'s resolving of the path, a
    tenth of its cost: line hits read every file a query shows."""
    *dirs, name = rel.split("/")
    dfd = _open_dir(real_root, dirs)  # type: ignore[arg-type]
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dfd)
    finally:
        os.close(dfd)
    with os.fdopen(fd, "rb") as fh:
        check_opened(rel, os.fstat(fd))
        return fh.read()


def read_bytes(root: Path, rel: str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of workspace file `rel` (at most `max_bytes` + 1, so a caller can tell it was cut)."""
    fd = open_read(root, rel)
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if max_bytes is None else fh.read(max_bytes + 1)


def read_text(root: Path, rel: str) -> str:
    """UTF-8 text of workspace file `rel`, line endings untouched; `UnicodeDecodeError` if not UTF-8."""
    return read_bytes(root, rel).decode("utf-8")


def file_size(root: Path, rel: str) -> int:
    fd = open_read(root, rel)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def write_bytes(root: Path, rel: str, data: bytes, *, mode_from: str | None = None) -> None:
    """Replace workspace file `rel` atomically (temp file + rename inside the opened directory).

    The directory is reached without following links and the temporary file is created
    with `O_EXCL | O_NOFOLLOW`, so a planted link can redirect neither the write nor the rename.
    `mode_from` copies the permission bits of that workspace file (a rename's source).
    """
    real = real_relative(root, rel)
    *dirs, name = real.split("/")
    try:
        dfd = _open_dir(Path(root).resolve(), dirs, create=True)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refuse_link_errors(rel, exc) from None
        raise
    tmp = f".{name}.dsls-tmp"
    try:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except FileNotFoundError:
            pass
        perms: int | None = None  # a new file: 0o666 less the umask
        try:
            existing = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISREG(existing.st_mode):
                perms = existing.st_mode & 0o7777
        except FileNotFoundError:
            pass
        if mode_from is not None:
            try:
                src = open_read(root, mode_from)
                try:
                    perms = os.fstat(src).st_mode & 0o7777
                finally:
                    os.close(src)
            except (OSError, PolicyViolation):
                pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                if perms is not None:
                    os.fchmod(fh.fileno(), perms)
        except BaseException:
            os.unlink(tmp, dir_fd=dfd)
            raise
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)


def unlink(root: Path, rel: str) -> None:
    """Remove workspace file `rel` (the name in its directory; a link is removed, never followed)."""
    real = real_relative(root, rel)
    *dirs, name = real.split("/")
    try:
        dfd = _open_dir(Path(root).resolve(), dirs)
    except FileNotFoundError:
        return
    try:
        os.unlink(name, dir_fd=dfd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dfd)

