"""Read a `SourceFile`'s bytes: a git blob, or a stable read from disk.

Blobs come from one long-lived `git cat-file --batch` process (one round trip
per file, no process per file). A disk read is "stable" when the file's stat
is the same before and after the read; if it changed while we read it, that
one file is read again (bounded), never the whole build.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .sources import GIT_ENV, SourceFile

_STABLE_READ_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class FileBytes:
    data: bytes
    mtime_ns: int | None = None  # disk reads only: the stat the bytes belong to
    size: int | None = None


class UnstableFile(OSError):
    """The file kept changing while we read it."""


def disk_stat(path: Path) -> tuple[int, int] | None:
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

    def __enter__(self) -> "ContentReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait(timeout=10)
            self._batch = None

    def read(self, src: SourceFile) -> FileBytes | None:
        return self._read_blob(src.oid) if src.oid else self.read_disk(src.path)

    def read_disk(self, rel: str) -> FileBytes | None:
        path = self.root / rel
        for _ in range(_STABLE_READ_ATTEMPTS):
            before = disk_stat(path)
            if before is None:
                return None
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                return None
            if disk_stat(path) == before:
                return FileBytes(data, before[0], before[1])
        raise UnstableFile(f"{rel} kept changing while it was read")

    def _read_blob(self, oid: str) -> FileBytes | None:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self.root,
                env=GIT_ENV,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(oid.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) != 3:  # "<oid> missing"
            return None
        size = int(header[2])
        data = self._batch.stdout.read(size)
        self._batch.stdout.read(1)  # the newline after the content
        return FileBytes(data)
