"""Secrets out of the logs we write: our own records, and what MCP servers print on stderr.

Redaction (`policy/redact.py`) is the one entry point; this module puts it in front of the
two kinds of log that are not events:

- `RedactingFormatter`: wraps a handler's formatter so each formatted record (message, its
  arguments, the traceback: an exception's text quotes what failed, a key included) is
  redacted. `redact_handler(handler)` installs it on a handler of ours (stderr, the editor's
  `window/logMessage`, the CLI's).
- `RedactedStderr`: a file an MCP server writes its stderr to (the SDK hands it to the child
  process as a descriptor): a pipe whose lines a thread redacts into the real log file.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import IO


def redact_text(text: str) -> str:
    # Imported on the first record: the detectors take ~0.4 s to load, which a command-line
    # start that logs nothing must not pay (tests/unit/cli/test_cli_help.py).
    from deepseek_ls.policy.redact import redact_text as redact

    return redact(text)


class RedactingFormatter(logging.Formatter):
    def __init__(self, inner: logging.Formatter | None = None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(self.inner.format(record))


def redact_handler(handler: logging.Handler) -> logging.Handler:
    """`handler` with its formatter wrapped to redact (once: a wrapped one is left as it is)."""
    if not isinstance(handler.formatter, RedactingFormatter):
        handler.setFormatter(RedactingFormatter(handler.formatter))
    return handler


class RedactedStderr:
    """A writable descriptor (`fileno()`) for a child's stderr; each line is redacted and appended
    to `path`. `close()` closes our end; the rest is written once the child's end closes too."""

    def __init__(self, path: Path) -> None:
        self._out: IO[str] = path.open("a", encoding="utf-8")
        read_fd, self._write_fd = os.pipe()
        self._reader = threading.Thread(target=self._copy, args=(read_fd,), daemon=True,
                                        name=f"stderr of {path.name}")
        self._reader.start()

    def fileno(self) -> int:
        return self._write_fd

    def write(self, text: str) -> int:  # the SDK may write a note of its own
        os.write(self._write_fd, text.encode("utf-8", "replace"))
        return len(text)

    def flush(self) -> None:
        pass

    def _copy(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as lines, self._out:
            for line in lines:
                self._out.write(redact_text(line))
                self._out.flush()

    def close(self) -> None:
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1

    def wait(self, timeout: float | None = None) -> None:
        """For tests: until every line written so far is in the file (the child has exited)."""
        self._reader.join(timeout)
