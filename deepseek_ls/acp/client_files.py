"""The ACP client's files: what the editor shows, read and written through it.

When the client offers `fs.readTextFile` and `fs.writeTextFile`, the agent reads workspace files with
`fs/read_text_file` (so its unsaved buffers are what the model sees and what edits are staged
against) and writes accepted changes with `fs/write_text_file`. A call the client answers with an
error (the person said no: acpx's "Allow write?", `acpx --deny-all`), with something that is not a
text, or not in time, is a `ClientFileError`: never a silent fall back to the disk, which would read
or write behind the buffer the person sees. Reads refused during a turn are kept (`refusals`) and
reported (`on_refused`), so the turn ends with the error.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Callable

from deepseek_ls.patch.overlay import DocumentOverlay

log = logging.getLogger(__name__)
CLIENT_FILE_TIMEOUT = 30.0


class ClientFileError(PermissionError):
    """The client did not read or write a file for us (refused, failed, answered nonsense or nothing
    in time). A `PermissionError`, so the tools and `World` report it as a file they could not read."""

    def __init__(self, method: str, relpath: str, reason: str) -> None:
        self.method = method
        self.relpath = relpath
        self.reason = reason
        verb = "read" if method == "fs/read_text_file" else "write"
        super().__init__(f"the editor refused to let deepseek-ls {verb} {relpath} ({method}: {reason})")


class ClientFiles:
    """Reads and writes through one ACP session's client: awaited on the event loop (`aread`,
    `awrite`) or blocking from worker threads (`read`, `write`)."""

    def __init__(self, conn: Any, session_id: str, root: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.session_id = session_id
        self.root = root
        self.loop = loop
        self.refusals: list[ClientFileError] = []  # reads refused since the turn began
        self.on_refused: Callable[[ClientFileError], None] | None = None  # called on the event loop

    async def aread(self, relpath: str) -> str:
        """The client's text of `relpath` (its buffer, unsaved typing included)."""
        try:
            response = await asyncio.wait_for(
                self.conn.read_text_file(session_id=self.session_id, path=str(self.root / relpath)),
                CLIENT_FILE_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - every failure is the same refusal, said as it came
            raise self._refused("fs/read_text_file", relpath, _why(exc)) from exc
        content = getattr(response, "content", None)
        if not isinstance(content, str):
            raise self._refused("fs/read_text_file", relpath, "its answer holds no text")
        return content

    async def awrite(self, relpath: str, text: str) -> None:
        """Have the client write `text` to `relpath` (its buffer and, as editors do, the file)."""
        try:
            await asyncio.wait_for(
                self.conn.write_text_file(session_id=self.session_id, path=str(self.root / relpath), content=text),
                CLIENT_FILE_TIMEOUT)
        except Exception as exc:  # noqa: BLE001
            raise ClientFileError("fs/write_text_file", relpath, _why(exc)) from exc

    def read(self, relpath: str) -> str:
        return self._blocking(self.aread(relpath))

    def write(self, relpath: str, text: str) -> None:
        self._blocking(self.awrite(relpath, text))

    def _blocking(self, coro: Any) -> Any:
        if on_loop(self.loop):  # waiting here would deadlock the loop the answer must arrive on
            coro.close()
            raise RuntimeError("client file access from the event loop thread")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def _refused(self, method: str, relpath: str, reason: str) -> ClientFileError:
        error = ClientFileError(method, relpath, reason)
        log.warning("%s", error)
        self.refusals.append(error)
        if self.on_refused is not None:
            self.on_refused(error)
        return error


def _why(exc: BaseException) -> str:
    """The client's own words for a failed call (its error's details when it gave some)."""
    if isinstance(exc, asyncio.TimeoutError):
        return f"no answer within {CLIENT_FILE_TIMEOUT:.0f}s"
    data = getattr(exc, "data", None)
    if isinstance(data, dict):
        said = next((data[k] for k in ("details", "reason", "message") if isinstance(data.get(k), str)), None)
        if said:
            return said[:300]
    return (f"{exc} {data}" if data else str(exc))[:300] or type(exc).__name__


def on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class ClientOverlay(DocumentOverlay):
    """The open-buffer view, asked of the ACP client file by file. A file that is not on the disk, or
    is binary there, is not asked for (the client has no text of it to show: the tools report it as
    missing or binary); a read the client refuses raises `ClientFileError`. Reads on the event loop
    itself (rare) cannot wait for the client and see the disk. Searches (ripgrep, the code index)
    read the disk, so they ask it file by file before showing a match (`overlay.withheld_reads`)."""

    asks_reads = True

    def __init__(self, root: Path, files: ClientFiles) -> None:
        super().__init__(root)
        self.files = files

    def get(self, relpath: str) -> tuple[str, int | None] | None:
        doc = super().get(relpath)
        if doc is not None or on_loop(self.files.loop) or self.root is None or not _text_file(self.root / relpath):
            return doc
        return self.files.read(relpath), None

    def refusing(self) -> str | None:
        return str(self.files.refusals[-1]) if self.files.refusals else None


def _text_file(path: Path) -> bool:
    """A regular file without a NUL byte in its first 8 KiB (git's test for binary)."""
    try:
        if not path.is_file():  # never opened otherwise: a FIFO would block
            return False
        with open(path, "rb") as fh:
            return b"\0" not in fh.read(8192)
    except OSError:  # missing, a directory, unreadable: nothing the client would show either
        return False
