"""UUIDv7 ids (RFC 9562): time-ordered, so session ids sort by creation time.

Python 3.11 has no `uuid.uuid7`; this is the layout from the RFC: 48-bit Unix
milliseconds, version 7, 12 bits that we use as a per-process counter so ids made
in the same millisecond still sort in creation order, variant 0b10, 62 random bits.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid

_lock = threading.Lock()
_last_ms = 0
_counter = 0

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def uuid7() -> uuid.UUID:
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            # Same millisecond (or the clock stepped back): keep order with the counter.
            ms = _last_ms
            _counter += 1
            if _counter > 0xFFF:
                ms += 1
                _counter = 0
        else:
            _counter = 0
        _last_ms = ms
        rand_a = _counter
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return uuid.UUID(int=value)


def new_id() -> str:
    """A new UUIDv7 as its canonical lowercase string."""
    return str(uuid7())


def is_id(text: str) -> bool:
    """True for a canonical lowercase UUID string (the only form used as a directory name)."""
    return bool(UUID_RE.match(text))


def uuid7_time_ms(value: str | uuid.UUID) -> int:
    """The Unix milliseconds encoded in a UUIDv7."""
    return uuid.UUID(str(value)).int >> 80
