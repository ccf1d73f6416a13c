"""Whether the server's copy of a buffer is the editor's, and one apply at a time per file.

Accepting a hunk computes the edit from the server's copy of the buffer (else the disk),
so that copy must be what the person sees. An apply is refused — nothing sent, nothing
recorded — while the copy is known to be wrong or behind:

- *out of sync*: the editor sent a change the server could not apply exactly: a
  `didChange` for a document it never opened, one whose params did not decode (dropped
  by the transport), one whose range lies past the end of the buffer or ends before it
  starts, or a `didOpen` that did not decode. Also a document version that does not
  increase (LSP: each change's version is higher than the last): a `didChange` whose
  version is not above every version seen since the document was opened, or a `didOpen`
  of a document already open with a version not above them. Then versions no longer name
  one text (changes may have arrived out of order, and a versioned edit would match a
  buffer it was not made for). A `didOpen` of a closed document, or a `didOpen` /
  whole-text `didChange` with a version above every one seen, says what the buffer holds
  again. The server's copy still takes every change it is sent (nothing is dropped).
- *behind*: the editor answered `applied: true` to our edit and has not sent the buffer
  back yet (`didChange` / `didOpen` / `didClose`). The next apply to that file waits for
  it (event-driven, bounded), else refuses: an edit computed against the text before the
  last one would land on the wrong lines of a client that applies unversioned edits.
  Also when the editor gave no usable answer to our edit (no answer in time, a malformed
  one: `unanswered`): it may still apply it, late, so the buffer holds the edit or not.
  Assuming "not applied" would insert the hunk a second time on a plain-`changes` client.
  What the editor sends next settles it only when it can: a `didOpen` / whole-text change /
  `didClose` (the server's copy is then the editor's text, whatever happened), a change
  after which the server's copy is exactly the edit's result (it landed as sent), or, for
  an edit pinned to a document version, a change to a later version (a versioned edit
  cannot apply to another version). Any other change — the person typing, or the edit
  landing late on top of that typing, where a plain edit's ranges name the wrong lines —
  leaves the buffer *uncertain*: out of sync, as above, until the editor sends its whole
  text; the person is told to check the buffer for the earlier hunk first.

Applies, rejects and undos of one file are serialised (`lock`, `locks`): two quick clicks
on Accept send one edit, then see the hunk is already accepted; a Reject sent while the
Accept's edit is out waits for the editor's answer, then finds the hunk accepted (or, if
the editor refused the edit, rejects it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any
from urllib.parse import unquote

log = logging.getLogger(__name__)

# How long an apply waits for the editor to send back the buffer of the previous apply.
CATCH_UP_SECONDS = 5.0


def _key(uri: str) -> str:
    return unquote(uri)  # pygls keys its documents the same way


class BufferSync:
    """The per-connection state above (`DeepSeekServer.feature_state(BufferSync)`)."""

    def __init__(self) -> None:
        self.out_of_sync: dict[str, str] = {}  # uri -> why the server cannot know the buffer
        self.behind: dict[str, str | None] = {}  # uri -> the text our applied edit gives
        self.unanswered: dict[str, str] = {}  # uri (also in `behind`) -> why the editor's answer said nothing
        self.pinned: dict[str, int] = {}  # uri (also in `unanswered`) -> the version the unanswered edit named
        self.versions: dict[str, int] = {}  # uri of an open document -> the highest version the editor gave it
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
        self._settle(key)
        if whole_text and self.out_of_sync.pop(key, None) is not None:
            log.info("document sync: %s is in sync again", uri[:300])
        if self._heard is not None:
            self._heard.set()

    def version_problem(self, uri: str, version: int) -> str | None:
        """Why a `didChange` of `uri` at `version` breaks the sync (None: the version goes up,
        or the document is not open, which is a problem of its own). Checked against the
        versions of the notifications before it: every change of one notification has its version."""
        last = self.versions.get(_key(uri))
        if last is None or version > last:
            return None
        return f"the editor sent a change with version {version} after version {last}; versions must increase"

    def changed(self, uri: str, version: int, text: str | None = None) -> None:
        """A `didChange` of `uri` at `version` was taken (after `version_problem`); `text`: the
        server's copy after it. After an unanswered edit, a change that does not show whether
        the edit landed leaves the buffer uncertain (module docstring)."""
        key = _key(uri)
        if key in self.versions:
            self.versions[key] = max(self.versions[key], version)
        if key in self.unanswered and not self._shows_outcome(key, version, text):
            reason = self.unanswered[key]
            self._settle(key)
            self.broken(uri, f"it changed after an edit the editor gave no usable answer to ({reason}), so that "
                             "edit may be in it, possibly on the wrong lines, or may still land: check the buffer for it")
            if self._heard is not None:
                self._heard.set()
            return
        self.heard(uri)

    def _shows_outcome(self, key: str, version: int, text: str | None) -> bool:
        """Whether a change to `version` giving `text` settles the unanswered edit of `key`: the
        text is the edit's result, or the edit was pinned to an earlier version."""
        if text is not None and self.behind.get(key) is not None and text == self.behind[key]:
            return True
        pinned = self.pinned.get(key)
        return pinned is not None and version > pinned

    def _settle(self, key: str) -> None:
        self.behind.pop(key, None)
        self.unanswered.pop(key, None)
        self.pinned.pop(key, None)

    def opened(self, uri: str, version: int) -> None:
        """A `didOpen` of `uri` at `version` was taken: in sync, unless the document was open
        already with a version not below it."""
        key = _key(uri)
        last = self.versions.get(key)
        if last is not None and version <= last:
            self.broken(uri, f"the editor opened it again with version {version} while it was open at version {last}")
            self.heard(uri)
            return
        self.versions[key] = version
        self.heard(uri, whole_text=True)

    def closed(self, uri: str) -> None:
        """A `didClose` of `uri`: the disk is its text again, and its versions start over."""
        self.versions.pop(_key(uri), None)
        self.heard(uri, whole_text=True)

    def applied(self, uri: str, new_text: str | None) -> None:
        """The editor said it applied our edit of `uri`, giving `new_text`."""
        self.behind[_key(uri)] = new_text
        self.unanswered.pop(_key(uri), None)
        self.pinned.pop(_key(uri), None)

    def unanswered_edit(self, uri: str, new_text: str | None, reason: str, pinned: int | None = None) -> None:
        """Our edit of `uri` (giving `new_text`; `pinned`: the document version it named, None
        for a plain edit) got no usable answer (`reason`): the editor may apply it yet, so the
        next apply waits for the buffer as after `applied`, and what the editor sends next
        settles it only if it shows the outcome (module docstring)."""
        key = _key(uri)
        self.behind[key] = new_text
        self.unanswered[key] = reason
        if pinned is None:
            self.pinned.pop(key, None)
        else:
            self.pinned[key] = pinned

    def unanswered_reason(self, uri: str) -> str | None:
        """Why the outcome of our last edit of `uri` is unknown (the editor may still apply it),
        or None. A Reject of its hunks waits for that to settle: rejected, the hunk could still
        land in the buffer afterwards."""
        return self.unanswered.get(_key(uri))

    # Before an apply ------------------------------------------------------------------------

    def lock(self, file: str) -> asyncio.Lock:
        """The lock of one workspace file (relative path): held while an edit of it is
        computed, sent and recorded, or its hunks are rejected. A wait for it is logged (a
        second Accept waits for the editor's answer to the first: it says why it is slow)."""
        lock = self._locks.get(file)
        if lock is None:
            lock = self._locks[file] = asyncio.Lock()
        elif lock.locked():
            log.info("document sync: %s waits for the apply, reject or undo of it under way", file[:300])
        return lock

    @contextlib.asynccontextmanager
    async def locks(self, files: Iterable[str]) -> AsyncIterator[None]:
        """Hold the locks of `files`, taken in one order (two holders never wait for each other)."""
        async with contextlib.AsyncExitStack() as stack:
            for file in sorted(set(files)):
                await stack.enter_async_context(self.lock(file))
            yield

    async def ready(self, uri: str, current: Callable[[], Any], timeout: float, then: str = "accept again") -> str | None:
        """None when an edit of `uri` may be computed now, else why not (for the person, who
        should `then` retry). `current()` is the server's copy (buffer, else disk): one that
        already shows the previous apply's text is not behind."""
        key = _key(uri)
        deadline = asyncio.get_running_loop().time() + timeout
        if key in self.behind:
            log.info("document sync: waiting (up to %g s) for the editor to send %s", timeout, uri[:300])
        while key in self.behind:
            if self.behind[key] is not None and current() == self.behind[key]:
                self._settle(key)
                break
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                if key in self.unanswered:
                    return ("the editor gave no usable answer to the previous edit of this file "
                            f"({self.unanswered[key]}) and has not sent the buffer since, so the server cannot tell "
                            "whether it applied that edit (it may still). Nothing was sent; check the buffer, type in "
                            f"it or reopen the file so the editor sends it, then {then}.")
                return ("the editor has not sent the buffer back since it applied the previous edit, so the "
                        f"server cannot tell what it holds now. Nothing was sent; save or reopen the file, then {then}.")
            self._heard = self._heard or asyncio.Event()
            self._heard.clear()
            try:
                await asyncio.wait_for(self._heard.wait(), left)
            except asyncio.TimeoutError:
                pass
        reason = self.out_of_sync.get(key)
        if reason is not None:
            return (f"the editor's buffer is out of sync with the server ({reason}). Nothing was sent; "
                    f"reopen the file (or make the editor send its whole text), then {then}.")
        return None
