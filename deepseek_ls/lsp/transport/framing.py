"""Framing: the byte stream in, message bodies out (`FrameParser`), and framed messages
out (`FrameWriter`).

Header names are case-insensitive, `Content-Length` must be a positive decimal
within the limit, a message over the limit is skipped without being stored (its
id read from its first or last bytes, so the request is still answered), and
after garbage the parser resynchronises on the next `Content-Length` header,
logging what it skipped.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from deepseek_ls.lsp.transport.limits import MAX_MESSAGE_BYTES_ENV, Limits

log = logging.getLogger(__name__)


def _preview(data: bytes, limit: int = 60) -> str:
    return repr(bytes(data[:limit])) + ("…" if len(data) > limit else "")


# A header line: `Name: value` (RFC 7230 token characters in the name).
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?\n")
# Where to pick the stream up again after garbage: the next Content-Length header.
_RESYNC = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# In a body being skipped, a complete Content-Length header line (a JSON body
# cannot contain one: raw line breaks are not allowed inside JSON strings).
_RESYNC_LINE = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
_BLANK_LINE = re.compile(rb"\r?\n")
# The request id of an oversized message, if it comes before its params.
_PEEK_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,128}")')
_PEEK_BYTES = 1024
# ... or at its end, after its params: `"id": 7}`, or followed only by short string
# members (`"jsonrpc": "2.0"`, `"method": "..."`, in encoders' hash order). One closing
# brace after it: the id is a member of the top-level object, not of its params.
_TAIL_ID = re.compile(
    rb'"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,128}")'
    rb'(?:\s*,\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.){0,200}")*\s*}\s*$'
)
_TAIL_BYTES = 512


@dataclass(frozen=True)
class Oversized:
    """A message over the size limit: skipped; `request_id` when it could be seen."""

    length: int
    request_id: int | str | None


class FrameParser:
    """Bytes in, message bodies out. Never stores more than one message of at
    most `max_message_bytes` (plus a header block)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._buf = bytearray()
        self._body_length: int | None = None  # reading a body of this length
        self._discard = 0  # bytes of an oversized body still to skip
        self._discard_length = 0
        self._peek = bytearray()  # the start of an oversized body (for its id)
        self._tail = bytearray()  # and its last bytes
        self._garbage = 0  # bytes skipped since the last message
        self._garbage_sample = b""
        self.skipped_bytes = 0  # in total (tests, logs)

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        self._buf += data
        out: list[bytes | Oversized] = []
        while True:
            if self._discard:
                if not self._skip_oversized(out):
                    break
            elif self._body_length is not None:
                if len(self._buf) < self._body_length:
                    break
                body = bytes(self._buf[: self._body_length])
                del self._buf[: self._body_length]
                self._body_length = None
                out.append(body)
            elif not self._read_headers(out):
                break
        return out

    # Headers --------------------------------------------------------------------

    def _read_headers(self, out: list[bytes | Oversized]) -> bool:
        """Parse one header block at the start of the buffer. True when progress
        was made (a state change or bytes dropped), False when more bytes are needed."""
        buf = self._buf
        if not buf:
            return False
        pos = 0
        headers: list[tuple[bytes, bytes]] = []
        while True:
            blank = _BLANK_LINE.match(buf, pos)
            if blank is not None:
                if not headers:  # a stray line break between messages
                    self._drop_garbage(blank.end())
                    return True
                return self._end_of_headers(headers, blank.end(), out)
            line = _HEADER_LINE.match(buf, pos)
            if line is not None:
                headers.append((line.group(1).lower(), line.group(2)))
                pos = line.end()
                if pos > self.limits.max_header_bytes:
                    self._resync("a header block larger than %d bytes" % self.limits.max_header_bytes)
                    return True
                continue
            # Not a complete header line here: either more bytes are coming, or garbage.
            rest = buf[pos:]
            newline = rest.find(b"\n")
            looks_partial = newline < 0 and (not rest or _could_be_header_start(rest))
            if looks_partial and len(buf) <= self.limits.max_header_bytes:
                return False
            self._resync("bytes that are not a header")
            return True

    def _end_of_headers(self, headers: list[tuple[bytes, bytes]], end: int, out: list[bytes | Oversized]) -> bool:
        values = {value for name, value in headers if name == b"content-length"}
        block = bytes(self._buf[:end])
        problem = None
        length = 0
        if not values:
            glued = _RESYNC.search(self._buf, 1, end)
            if glued is not None:  # garbage glued to the front of a header: `xyzContent-Length: 5`
                self._drop_garbage(glued.start())
                self._flush_garbage("bytes glued to a header")
                return True
            problem = "a header block without Content-Length"
        elif len(values) > 1:
            problem = "conflicting Content-Length headers"
        else:
            raw = next(iter(values))
            if not raw.isdigit() or len(raw) > 20:
                problem = f"Content-Length {_preview(raw, 30)} is not a non-negative decimal number"
            else:
                length = int(raw)
                if length == 0:
                    problem = "Content-Length 0 (an empty body is not a JSON-RPC message)"
        if problem is not None:
            del self._buf[:end]
            self._count_garbage(block)
            self._flush_garbage(problem)
            return True
        del self._buf[:end]
        self._flush_garbage("bytes before a header")
        if length > self.limits.max_message_bytes:
            log.warning(
                "transport: skipping a message of %d bytes (over the limit of %d bytes, %s)",
                length, self.limits.max_message_bytes, MAX_MESSAGE_BYTES_ENV,
            )
            self._discard = self._discard_length = length
            self._peek = bytearray()
            self._tail = bytearray()
            return True
        self._body_length = length
        return True

    # Garbage and resynchronisation -----------------------------------------------

    def _resync(self, what: str) -> None:
        """Drop bytes up to the next `Content-Length` header (not the one at the start)."""
        found = _RESYNC.search(self._buf, 1)
        if found is not None:
            self._drop_garbage(found.start())
            self._flush_garbage(what)
            return
        # None yet: keep a tail that may be the start of one.
        keep = len(b"content-length") + 2
        drop = max(len(self._buf) - keep, 1)
        self._drop_garbage(drop)

    def _drop_garbage(self, n: int) -> None:
        self._count_garbage(bytes(self._buf[:n]))
        del self._buf[:n]

    def _count_garbage(self, data: bytes) -> None:
        if not self._garbage:
            self._garbage_sample = data[:60]
        self._garbage += len(data)
        self.skipped_bytes += len(data)

    def _flush_garbage(self, what: str) -> None:
        if self._garbage:
            # Two bare line breaks between messages are not worth a warning.
            level = logging.DEBUG if not self._garbage_sample.strip() else logging.WARNING
            log.log(level, "transport: skipped %d byte(s) (%s): %s", self._garbage, what, _preview(self._garbage_sample))
        self._garbage = 0
        self._garbage_sample = b""

    def _skip_oversized(self, out: list[bytes | Oversized]) -> bool:
        """Drop the body of an oversized message; True when progress was made."""
        buf = self._buf
        if not buf:
            return False
        # A new header inside the skipped bytes: the sender lied about the length.
        found = _RESYNC_LINE.search(buf, 0, min(len(buf), self._discard + 64))
        if found is not None and found.start() < self._discard:
            self._consume_oversized(found.start())
            log.warning(
                "transport: the oversized message ended early; resuming at the next header after %d byte(s)",
                self._discard_length - self._discard,
            )
            self._finish_oversized(out, whole=False)
            return True
        if len(buf) >= self._discard:
            self._consume_oversized(self._discard)
            self._finish_oversized(out, whole=True)
            return True
        # Keep a tail in case a header straddles two reads.
        keep = 64
        drop = len(buf) - keep
        if drop <= 0:
            return False
        self._consume_oversized(drop)
        return True

    def _consume_oversized(self, n: int) -> None:
        if len(self._peek) < _PEEK_BYTES:
            self._peek += self._buf[: min(n, _PEEK_BYTES - len(self._peek))]
        self._tail += self._buf[max(n - _TAIL_BYTES, 0) : n]
        del self._tail[:-_TAIL_BYTES]
        del self._buf[:n]
        self._discard -= n
        self.skipped_bytes += n

    def _finish_oversized(self, out: list[bytes | Oversized], whole: bool) -> None:
        """`whole`: the body was skipped to its declared end, so its tail is its end."""
        msg_id = _peek_id(bytes(self._peek))
        if msg_id is None and whole:
            msg_id = _tail_id(bytes(self._tail))
        out.append(Oversized(self._discard_length, msg_id))
        self._discard = self._discard_length = 0
        self._peek = bytearray()
        self._tail = bytearray()


def _could_be_header_start(rest: bytearray) -> bool:
    """True when `rest` (no line break yet) may still become a header line."""
    if rest == b"\r":
        return True
    colon = rest.find(b":")
    name = rest if colon < 0 else rest[:colon]
    return bool(re.fullmatch(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]*[ \t]*", bytes(name)))


def _peek_id(start: bytes) -> int | str | None:
    """The id of a request from the first bytes of its body (before `"params"`)."""
    params = start.find(b'"params"')
    head = start if params < 0 else start[:params]
    return _id_of(_PEEK_ID.search(head))


def _tail_id(end: bytes) -> int | str | None:
    """The id of a request from the last bytes of its body (after its params)."""
    return _id_of(_TAIL_ID.search(end))


def _id_of(match: re.Match[bytes] | None) -> int | str | None:
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


class FrameWriter:
    """Writes one framed message at a time (header with the byte length)."""

    def __init__(self, write: Callable[[bytes], Any], flush: Callable[[], Any] | None = None) -> None:
        self._write = write
        self._flush = flush
        self._lock = threading.Lock()
        self.closed = False
        self.on_broken: Callable[[], None] | None = None

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        frame = b"Content-Length: %d\r\n\r\n" % len(data) + data
        with self._lock:
            try:
                self._write(frame)
                if self._flush is not None:
                    self._flush()
            except (BrokenPipeError, ConnectionError, ValueError, OSError) as error:
                self.closed = True
                log.warning("transport: the client connection is gone (%s); stopping", error)
                if self.on_broken is not None:
                    self.on_broken()

    def close(self) -> None:
        self.closed = True
