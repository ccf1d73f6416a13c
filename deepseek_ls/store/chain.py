"""The keyed hash chain that binds every line of a session log to its seal.

Each line the writer appends ends with ``,"mac":"<hex>"}``: an HMAC, under this user's key
(`store/seal.py`), of the previous line's mac and this line without its mac. The session's
sealed marker (`store/provenance.py`) binds the log's beginning (its first line, or all of it
when a session was adopted or migrated); the chain carries that binding to every later line,
so a line inserted, changed or removed in the middle breaks it. The writer only needs the
last line's mac to append: one HMAC per line, no extra write, no marker update.

The line before the first chained one is the marker's own: when it carries no mac (a log
written before the chain existed), the chain starts from the sha256 of everything before it.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Callable

from deepseek_ls.store import seal

_OPEN = b',"mac":"'
_CLOSE = b'"}\n'
_HEX = 64
SUFFIX_LEN = len(_OPEN) + _HEX + len(_CLOSE)  # after the line's body (which lacks its closing brace)


def mac_of(key: bytes, prev: str, body: bytes) -> str:
    """The mac of a line whose text without its mac suffix is `body`, following `prev`."""
    return hmac.digest(key, prev.encode("ascii") + b"\n" + body, "sha256").hex()


def chained(key: bytes, prev: str, body: bytes) -> tuple[bytes, str]:
    """The complete line for `body` (an envelope without its closing brace) and its mac."""
    mac = mac_of(key, prev, body)
    return body + _OPEN + mac.encode("ascii") + _CLOSE, mac


def split(line: bytes) -> tuple[bytes, str] | None:
    """(body, mac) of a complete chained line (newline included); None for a line without a mac."""
    if len(line) <= SUFFIX_LEN or not line.endswith(_CLOSE) or line[-SUFFIX_LEN:-SUFFIX_LEN + len(_OPEN)] != _OPEN:
        return None
    mac = line[-_HEX - len(_CLOSE):-len(_CLOSE)]
    try:
        return line[:-SUFFIX_LEN], mac.decode("ascii")
    except UnicodeDecodeError:
        return None


def head(data: bytes, end: int | None = None) -> str:
    """What the next line chains from, given the log's complete lines `data[:end]` so far (all of
    `data` by default; the bytes before `end` are not copied): the last line's mac, else (no line
    has one yet) the sha256 of those bytes."""
    end = len(data) if end is None else end
    if end:
        parts = split(data[data.rfind(b"\n", 0, end - 1) + 1:end])
        if parts is not None:
            return parts[1]
    return seal.digest(memoryview(data)[:end])


def _hmac_sha256(key: bytes) -> tuple[Callable[[], "hashlib._Hash"], Callable[[], "hashlib._Hash"]]:
    """`hmac.digest(key, msg, "sha256")` keyed once: copies of RFC 2104's inner and outer hashes
    (`first_break` updates a copy of each per message). `hmac.digest` keys OpenSSL's HMAC again
    on every call, which is most of its cost on a log line."""
    block = hashlib.sha256().block_size
    key = (hashlib.sha256(key).digest() if len(key) > block else key).ljust(block, b"\0")
    inner, outer = hashlib.sha256(bytes(b ^ 0x36 for b in key)), hashlib.sha256(bytes(b ^ 0x5C for b in key))
    return inner.copy, outer.copy


def first_break(key: bytes, data: bytes, start: int) -> tuple[int, bytes] | None:
    """Check the chain of the complete lines of `data` from offset `start` (a line boundary);
    None when every one carries the right mac, else (offset, line) of the first that does not."""
    # `split` and `mac_of` inlined, and the HMAC too: this loop runs once per line of every log checked.
    prev = head(data, start).encode("ascii")
    pos, end = start, len(data)
    find, same = data.find, hmac.compare_digest
    inner, outer = _hmac_sha256(key)
    while pos < end:
        newline = find(b"\n", pos)
        if newline < 0:
            return None  # an incomplete last line: torn, the writer's repair cuts it
        cut = newline + 1 - SUFFIX_LEN  # where the line's mac suffix starts
        mac = data[cut + len(_OPEN):newline - 2]
        i, o = inner(), outer()
        i.update(prev + b"\n" + data[pos:cut])
        o.update(i.digest())
        if (cut <= pos or data[cut:cut + len(_OPEN)] != _OPEN or data[newline - 2:newline + 1] != _CLOSE
                or not same(mac, o.hexdigest().encode("ascii"))):
            return pos, data[pos:newline + 1]
        prev = mac
        pos = newline + 1
    return None
