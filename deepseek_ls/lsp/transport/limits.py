"""What the transport accepts (`Limits`, docs/protocol.md "Limits"), and `cap`:
error messages never echo a whole input."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES_ENV = "DEEPSEEK_LS_MAX_MESSAGE_BYTES"


@dataclass(frozen=True)
class Limits:
    """What the transport accepts (docs/protocol.md, "Limits")."""

    max_message_bytes: int = 64 * 1024 * 1024
    max_header_bytes: int = 8 * 1024
    max_nesting: int = 64
    max_error_chars: int = 300

    @classmethod
    def from_env(cls, max_message_bytes: int | None = None) -> Limits:
        """The defaults, with the message limit from the argument, else
        `DEEPSEEK_LS_MAX_MESSAGE_BYTES` (a bad value is logged and ignored)."""
        if max_message_bytes is None:
            raw = os.environ.get(MAX_MESSAGE_BYTES_ENV, "").strip()
            if raw:
                if raw.isdigit() and int(raw) > 0:
                    max_message_bytes = int(raw)
                else:
                    log.warning("%s=%r is not a positive number of bytes; using the default", MAX_MESSAGE_BYTES_ENV, raw)
        if max_message_bytes is None:
            return cls()
        if max_message_bytes <= 0:
            raise ValueError("the maximum message size must be a positive number of bytes")
        return cls(max_message_bytes=max_message_bytes)


def cap(text: str, limit: int = Limits.max_error_chars) -> str:
    """`text` cut to `limit` characters (error messages never echo a whole input)."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[: max(limit - 25, 0)] + f"… ({len(text)} chars)"

