"""What the editor sees: open buffers (unsaved edits included) over the disk.

The language server keeps a `DocumentOverlay` in sync with `didOpen` /
`didChange` / `didClose`; tools and the patch store read through it so the
model sees, and patches are staged against, exactly what the user sees. Keys
are workspace-relative POSIX paths. Thread-safe: the server updates it from its
event loop while tools may read from worker threads.
"""

from __future__ import annotations

import threading
from pathlib import Path

from deepseek_ls.policy import safe_files
from deepseek_ls.policy.secret_files import check_not_secret


class DocumentOverlay:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root).resolve() if root is not None else None
        self._docs: dict[str, tuple[str, int | None]] = {}
        self._lock = threading.Lock()

    def set(self, relpath: str, text: str, version: int | None = None) -> None:
        with self._lock:
            self._docs[relpath] = (text, version)

    def remove(self, relpath: str) -> None:
        with self._lock:
            self._docs.pop(relpath, None)

    def get(self, relpath: str) -> tuple[str, int | None] | None:
        with self._lock:
            return self._docs.get(relpath)

    def open_paths(self) -> list[str]:
        with self._lock:
            return sorted(self._docs)

    def read_text(self, relpath: str, *, root: Path | None = None) -> str:
        """The buffer's text if the document is open, else the file on disk.

        Disk text is read without newline translation so CRLF survives, as
        UTF-8; a file that is not UTF-8 raises `UnicodeDecodeError` (tools
        report it as a binary or undecodable file). The file is opened without
        following links and checked (`policy.safe_files`), and a credential file
        recognised by its content is refused (`PolicyViolation`) whether it is
        open in the editor or not.
        """
        doc = self.get(relpath)
        if doc is not None:
            check_not_secret(relpath, doc[0])
            return doc[0]
        base = root if root is not None else self.root
        if base is None:
            raise ValueError("DocumentOverlay has no root; pass root= to read files from disk")
        text = safe_files.read_text(Path(base), relpath)
        check_not_secret(relpath, text)
        return text

    def source(self, relpath: str) -> str:
        return "buffer" if self.get(relpath) is not None else "disk"


def read_disk_text(path: Path) -> str:
    """Text of a file outside the tools' reach (no policy checks); workspace files go through `read_text`."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()
