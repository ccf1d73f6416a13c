"""The keyed hash chain that binds every line of a session log to its seal.

Each line the writer appends ends with ``,"mac":"<hex>"}``: an HMAC, under this user's key
(`patch/seal.py`), of the previous line's mac and this line without its mac. The session's
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

from deepseek_ls.patch import seal

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


def head(data: bytes) -> str:
    """What the next line chains from, given the log's complete lines `data` so far: the last
    line's mac, else (no line has one yet) the sha256 of `data`."""
    if data:
        start = data.rfind(b"\n", 0, len(data) - 1) + 1
        parts = split(data[start:])
        if parts is not None:
            return parts[1]
    return seal.digest(data)


def first_break(key: bytes, data: bytes, start: int) -> tuple[int, bytes] | None:
    """Check the chain of the complete lines of `data` from offset `start` (a line boundary);
    None when every one carries the right mac, else (offset, line) of the first that does not."""
    prev = head(data[:start])
    pos = start
    end = len(data)
    while pos < end:
        newline = data.find(b"\n", pos)
        if newline < 0:
            return None  # an incomplete last line: torn, the writer's repair cuts it
        line = data[pos:newline + 1]
        parts = split(line)
        if parts is None or not hmac.compare_digest(parts[1], mac_of(key, prev, parts[0])):
            return pos, line
        prev = parts[1]
        pos = newline + 1
    return None
