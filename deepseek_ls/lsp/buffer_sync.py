"""Whether the server's copy of a buffer is the editor's, and one apply at a time per file.

Accepting a hunk computes the edit from the server's copy of the buffer (else the disk),
so that copy must be what the person sees. An apply is refused — nothing sent, nothing
recorded — while the copy is known to be wrong or behind:

- *out of sync*: the editor sent a change the server could not apply exactly: a
  `didChange` for a document it never opened, one whose params did not decode (dropped
  by the transport), one whose range lies past the end of the buffer or ends before it
  starts, or a `didOpen` that did not decode. A `didOpen`, or a `didChange` with the
  whole text, says what the buffer holds again.
- *behind*: the editor answered `applied: true` to our edit and has not sent the buffer
  back yet (`didChange` / `didOpen` / `didClose`). The next apply to that file waits for
  it (event-driven, bounded), else refuses: an edit computed against the text before the
  last one would land on the wrong lines of a client that applies unversioned edits.

Applies to one file are serialised (`lock`): two quick clicks on Accept send one edit,
then see the hunk is already accepted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

log = logging.getLogger(__name__)

# How long an apply waits for the editor to send back the buffer of the previous apply.
CATCH_UP_SECONDS = 5.0


def _key(uri: str) -> str:
    return unquote(uri)  # pygls keys its documents the same way


class BufferSync:
    """The per-connection state above (`DeepSeekServer.buffer_sync`)."""

    def __init__(self) -> None:
        self.out_of_sync: dict[str, str] = {}  # uri -> why the server cannot know the buffer
        self.behind: dict[str, str | None] = {}  # uri -> the text our applied edit gives
        self._locks: dict[str, asyncio.Lock] = {}
        self._heard: asyncio.Event | None = None

    # What the editor sent -------------------------------------------------------------------

    def broken(self, uri: str, reason: str) -> None:
        """The server's copy of `uri` is no longer known to be the editor's."""
        if _key(uri) not in self.out_of_sync:
            log.warning("document sync: %s is out of sync: %s; applies to it are refused until the editor "
                        "sends its whole text (reopen the file)", uri[:300], reason)
        self.out_of_sync[_key(uri)] = reason

    def heard(self, uri: str, *, whole_text: bool = False) -> None:
        """The editor sent `uri` (didOpen, didChange, didClose); `whole_text`: the server's
        copy is now exactly what it said (didOpen, a whole-text change, a close)."""
        key = _key(uri)
        self.behind.pop(key, None)
        if whole_text and self.out_of_sync.pop(key, None) is not None:
            log.info("document sync: %s is in sync again", uri[:300])
        if self._heard is not None:
            self._heard.set()

    def applied(self, uri: str, new_text: str | None) -> None:
        """The editor said it applied our edit of `uri`, giving `new_text`."""
        self.behind[_key(uri)] = new_text

    # Before an apply ------------------------------------------------------------------------

    def lock(self, file: str) -> asyncio.Lock:
        lock = self._locks.get(file)
        if lock is None:
            lock = self._locks[file] = asyncio.Lock()
        return lock

    async def ready(self, uri: str, current: Callable[[], Any], timeout: float) -> str | None:
        """None when an edit of `uri` may be computed now, else why not (for the person).
        `current()` is the server's copy (buffer, else disk): one that already shows the
        previous apply's text is not behind."""
        key = _key(uri)
        deadline = asyncio.get_running_loop().time() + timeout
        while key in self.behind:
            if self.behind[key] is not None and current() == self.behind[key]:
                self.behind.pop(key, None)
                break
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return ("the editor has not sent the buffer back since it applied the previous edit, so the "
                        "server cannot tell what it holds now. Nothing was sent; save or reopen the file, then accept again.")
            self._heard = self._heard or asyncio.Event()
            self._heard.clear()
            try:
                await asyncio.wait_for(self._heard.wait(), left)
            except asyncio.TimeoutError:
                pass
        reason = self.out_of_sync.get(key)
        if reason is not None:
            return (f"the editor's buffer is out of sync with the server ({reason}). Nothing was sent; "
                    "reopen the file (or make the editor send its whole text), then accept again.")
        return None
