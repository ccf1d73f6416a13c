"""Server logs: to stderr always (stdout is the LSP wire), and to the client's
`window/logMessage` once connected; both through redaction (`policy/log_gate.py`)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

from deepseek_ls.policy.log_gate import RedactingFormatter

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

# Our own records only: forwarding pygls' records would log every message sent.
FORWARDED_LOGGER = "deepseek_ls"

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


def configure_stderr_logging() -> None:
    """Log to stderr; `DEEPSEEK_LS_LOG` (debug|info|warning|error) sets our level."""
    level_name = os.environ.get("DEEPSEEK_LS_LOG", "info").upper()
    level = getattr(logging, level_name, logging.INFO)
    root = logging.getLogger()
    if not any(getattr(h, "stream", None) is sys.stderr for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(RedactingFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger(FORWARDED_LOGGER).setLevel(level)


class ClientLogHandler(logging.Handler):
    """Forwards records to `window/logMessage`, from any thread."""

    def __init__(self, server: DeepSeekServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(level=logging.INFO)
        self._server = server
        self._loop = loop
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return  # a record logged while sending a record: drop, never recurse
        try:
            message = self.format(record)
        except Exception:  # noqa: BLE001
            self.handleError(record)
            return
        params = types.LogMessageParams(
            type=_LEVELS.get(record.levelno, types.MessageType.Log), message=message
        )
        if _on_loop(self._loop):
            self._send(params)
        else:
            self._loop.call_soon_threadsafe(self._send, params)

    def _send(self, params: types.LogMessageParams) -> None:
        self._local.busy = True
        try:
            self._server.window_log_message(params)
        except Exception:  # noqa: BLE001 - a closed pipe must not break logging
            pass
        finally:
            self._local.busy = False


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def forward_logs_to_client(server: DeepSeekServer) -> ClientLogHandler:
    """Attach a `ClientLogHandler` to our logger (once per server)."""
    logger = logging.getLogger(FORWARDED_LOGGER)
    for existing in logger.handlers:
        if isinstance(existing, ClientLogHandler):
            logger.removeHandler(existing)
    handler = ClientLogHandler(server, asyncio.get_running_loop())
    handler.setFormatter(RedactingFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s")))
    logger.addHandler(handler)
    return handler


def detach_client_logs() -> None:
    logger = logging.getLogger(FORWARDED_LOGGER)
    for existing in list(logger.handlers):
        if isinstance(existing, ClientLogHandler):
            logger.removeHandler(existing)
