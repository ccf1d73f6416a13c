"""What the editor sees: open buffers (unsaved edits included) over the disk.

The language server keeps a `DocumentOverlay` in sync with `didOpen` /
`didChange` / `didClose`; tools and the patch store read through it so the
model sees, and patches are staged against, exactly what the user sees. Keys
are workspace-relative POSIX paths. Thread-safe: the server updates it from its
event loop while tools may read from worker threads. It lives in `patch/`, the lower of the two
floors that read through it (the tools sit above the patch store).

An overlay whose reads are asked of someone who may refuse them (`asks_reads`: the ACP client's)
also decides what searches may show: ripgrep and the code index read the disk, so a match in a file
the editor did not let us read is withheld (`withheld_reads`), never shown from the disk behind it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from deepseek_ls.policy import safe_files
from deepseek_ls.policy.secret_files import check_not_secret


# Files a search asks the editor about, at most: a search matching more says so rather than
# sending the editor a flood of reads.
MAX_ASKED_FILES = 50


class DocumentOverlay:
    asks_reads = False  # reads go through someone who may refuse them (the ACP client)

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

    def refusing(self) -> str | None:
        """Why reads are being refused (a read was refused in this turn), else None."""
        return None


def withheld_reads(overlay: DocumentOverlay, paths: list[str]) -> dict[str, str]:
    """Of `paths` (files a search matched, from the disk), those whose text must not be shown, each
    with the reason: nothing for an overlay that reads what it likes; for one that `asks_reads`,
    every file the editor does not let us read. Each file is asked once (in order, at most
    MAX_ASKED_FILES); after a refusal the rest are not asked (the editor is refusing reads). Blocks
    on the editor: call it from a worker thread."""
    if not overlay.asks_reads:
        return {}
    out: dict[str, str] = {}
    refusing = overlay.refusing()
    for n, path in enumerate(dict.fromkeys(paths)):
        if refusing is not None:
            out[path] = f"not asked: the editor is refusing reads ({refusing})"
        elif n >= MAX_ASKED_FILES:
            out[path] = f"not asked: more than {MAX_ASKED_FILES} files matched; narrow the search"
        else:
            try:
                if overlay.get(path) is None:
                    out[path] = "the editor has no text of it"
            except (PermissionError, RuntimeError) as exc:  # the editor refused, failed or could not be asked
                out[path] = refusing = str(exc)
    return out


def withheld_note(withheld: dict[str, int], reasons: dict[str, str], what: str = "matches") -> dict:
    """The part of a search result that says what was withheld (`withheld_reads`) and why:
    {"withheld": [{path, matches, reason}], "note": "N matches withheld in F files: ..."}; {} when nothing was."""
    if not withheld:
        return {}
    first = reasons[next(iter(withheld))]
    return {
        "withheld": [{"path": p, what: n, "reason": reasons[p]} for p, n in withheld.items()],
        "note": (f"{sum(withheld.values())} {what} withheld in {len(withheld)} file(s) the editor did not let "
                 f"deepseek-ls read ({first}); their text is not shown"),
    }


def read_disk_text(path: Path) -> str:
    """Text of a file outside the tools' reach (no policy checks); workspace files go through `read_text`."""
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()
