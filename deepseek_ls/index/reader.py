"""Read a `SourceFile`'s bytes: a git blob, or a stable read from disk.

Blobs come from one long-lived `git cat-file --batch` process (one round trip
per file, no process per file), started through `policy/git_safety.py` (nothing
the repository's config names runs); every answer is awaited with a deadline and
a blob larger than `MAX_BLOB_BYTES` is not kept in memory. A disk read is "stable" when the file's stat
is the same before and after the read; if it changed while we read it, that
one file is read again (bounded), never the whole build.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..policy import git_safety, safe_files
from ..policy.errors import PolicyViolation
from ..policy.launch import ProgramNotRun
from .sources import SourceFile

_STABLE_READ_ATTEMPTS = 5
# One blob's answer must arrive within this; a stuck git is killed and the file recorded unreadable.
BLOB_TIMEOUT_SECONDS = 30.0
# Larger blobs are read past, keeping this much (+1, so the size check skips them as too large).
MAX_BLOB_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileBytes:
    data: bytes
    mtime_ns: int | None = None  # disk reads only: the stat the bytes belong to
    size: int | None = None


class UnstableFile(OSError):
    """The file kept changing while we read it."""


class UnreadableFile(OSError):
    """A file the index must not read (hard-linked, or no longer a regular file)."""


def disk_stat(path: Path | str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class ContentReader:
    """Use as a context manager; `read()` returns None when the file is gone."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._batch: subprocess.Popen[bytes] | None = None
        self._pending = bytearray()

    def __enter__(self) -> "ContentReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            batch, self._batch = self._batch, None
            assert batch.stdin is not None
            try:
                batch.stdin.close()
                batch.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                batch.kill()
                batch.wait(timeout=10)

    def read(self, src: SourceFile, *, check_after: bool = True) -> FileBytes | None:
        return self._read_blob(src.oid) if src.oid else self.read_disk(src.path, check_after=check_after)

    def read_disk(self, rel: str, *, check_after: bool = True) -> FileBytes | None:
        """The file's bytes and the stat they belong to: the stat taken on the open file
        before reading must match the path's stat after (neither written to nor replaced
        meanwhile). Plain `os` calls: a build reads every file. `check_after=False`: the
        caller compares the path's stat with the returned one itself, later (a full build
        does for every file at its end, so a second stat here is one too many)."""
        path = os.path.join(self.root, rel)
        for _ in range(_STABLE_READ_ATTEMPTS):
            try:
                # Not through a link swapped in since the walk (it could point out of the
                # workspace), and never waiting on a FIFO.
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
            except FileNotFoundError:
                return None
            try:
                st = os.fstat(fd)
                try:
                    safe_files.check_opened(rel, st)  # as for the agent's tools: regular, one link
                except PolicyViolation as exc:
                    raise UnreadableFile(f"{rel} is not read: {exc.reason}") from None
                before = (st.st_mtime_ns, st.st_size)
                chunks = [os.read(fd, st.st_size + 1)]
                # Exactly the stat's size: the whole file (it would have given one byte more had it
                # grown). Otherwise (it grew, or a short read) read to the end; the stat check decides.
                if len(chunks[0]) != st.st_size:
                    while chunks[-1]:
                        chunks.append(os.read(fd, 1 << 20))
            finally:
                os.close(fd)
            if not check_after or disk_stat(path) == before:
                return FileBytes(b"".join(chunks), before[0], before[1])
        raise UnstableFile(f"{rel} kept changing while it was read")

    def _read_blob(self, oid: str) -> FileBytes | None:
        if self._batch is None:
            try:
                safe = git_safety.prepare(self.root)
            except (git_safety.UnsafeRepository, subprocess.TimeoutExpired, ProgramNotRun) as error:
                raise OSError(f"git is not run on {self.root}: {error}") from None
            if safe is None:
                raise OSError(f"{self.root} is no longer a git repository")
            self._batch = subprocess.Popen(
                safe.argv("cat-file", "--batch"),
                cwd=safe.cwd,
                env=safe.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
            self._pending = bytearray()
        assert self._batch.stdin is not None
        deadline = time.monotonic() + BLOB_TIMEOUT_SECONDS
        try:
            self._batch.stdin.write(oid.encode() + b"\n")
            self._batch.stdin.flush()
            header = self._take_line(deadline).split()
            if len(header) != 3:  # "<oid> missing"
                return None
            size = int(header[2])
            data = self._take(size, deadline, keep=MAX_BLOB_BYTES + 1)
            self._take(1, deadline, keep=0)  # the newline after the content
        except (OSError, ValueError, EOFError) as error:
            self._abandon()
            raise OSError(f"git cat-file: {error}") from None
        return FileBytes(data)

    # -- bounded reads of the batch's answers ----------------------------------------------

    def _fill(self, deadline: float) -> None:
        assert self._batch is not None and self._batch.stdout is not None
        remaining = deadline - time.monotonic()
        fd = self._batch.stdout.fileno()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError(f"no answer within {BLOB_TIMEOUT_SECONDS:g} s")
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise EOFError("git cat-file --batch ended")
        self._pending += chunk

    def _take_line(self, deadline: float) -> bytes:
        while (end := self._pending.find(b"\n")) < 0:
            if len(self._pending) > 4096:
                raise ValueError("an answer header longer than 4096 bytes")
            self._fill(deadline)
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        return line

    def _take(self, size: int, deadline: float, *, keep: int) -> bytes:
        """The next `size` bytes of the answer, of which at most `keep` are kept."""
        kept = bytearray()
        while size > 0:
            if not self._pending:
                self._fill(deadline)
            n = min(size, len(self._pending))
            if len(kept) < keep:
                kept += self._pending[: min(n, keep - len(kept))]
            del self._pending[:n]
            size -= n
        return bytes(kept)

    def _abandon(self) -> None:
        if self._batch is not None:
            batch, self._batch = self._batch, None
            batch.kill()
            try:
                batch.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
