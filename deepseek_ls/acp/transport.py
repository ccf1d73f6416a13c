"""The stdio transport under the ACP SDK's `Connection`: newline-delimited JSON-RPC where only a
well-formed JSON-RPC object is a message.

The SDK's own stdio framing hands every decoded line to the connection: a line that is JSON but
not an object (`[]`, `"x"`, `7`) raised inside its receive loop and ended the agent, and `null`
read as the end of the stream, so one stray line from a buggy or hostile client lost every
session. Here each line is checked first: a request that is not JSON-RPC is answered with the
JSON-RPC error (`-32700` not JSON, `-32600` not a request) and the connection goes on; a
malformed answer to one of our requests (a `session/request_permission` whose `error` is not an
object) still settles that request, as an error, so nothing waits for it forever.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one line beyond this is dropped (and answered), not buffered
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")')


class StdioJsonRpc:
    """A `acp` `Transport` (send / receive / close of JSON-RPC objects) over asyncio byte streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._reader = reader
        self._writer = writer
        self._max = max_message_bytes
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line, too_long = await self._read_line()
            if line is None:
                return None  # the client closed its end
            if too_long:
                await self._reject(INVALID_REQUEST, f"message larger than {self._max} bytes", _head_id(line))
                continue
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:  # not JSON, or not UTF-8
                await self._reject(PARSE_ERROR, "Parse error: the line is not JSON", _head_id(line))
                continue
            checked = _checked(message)
            if isinstance(checked, dict):
                return checked
            if checked is not None:
                await self._reject(INVALID_REQUEST, checked, _plain_id(message))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - stdout already gone
            log.debug("closing stdout failed", exc_info=True)

    async def _read_line(self) -> tuple[bytes | None, bool]:
        """(one line, whether it exceeded the cap: then only its head is kept); (None, False) at the end."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                done = True
            except asyncio.LimitOverrunError as exc:
                part = await self._reader.readexactly(exc.consumed)
                done = False
            except asyncio.IncompleteReadError as exc:
                part, done = exc.partial, True
                if not part and not chunks:
                    return None, False
            if size < self._max:
                chunks.append(part)
            size += len(part)
            if done:
                return b"".join(chunks)[: self._max + 1] if size > self._max else b"".join(chunks), size > self._max

    async def _reject(self, code: int, message: str, request_id: Any) -> None:
        log.warning("ACP: dropped a malformed message (%s)", message)
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except Exception:  # noqa: BLE001 - the client is gone; the receive loop sees the end next
            log.debug("could not answer a malformed message", exc_info=True)


def _checked(message: Any) -> dict[str, Any] | str | None:
    """The message to hand on, a reason to answer `-32600`, or None to drop it (a response)."""
    if not isinstance(message, dict):
        return "Invalid Request: a JSON-RPC message is an object (batches are not used by ACP)"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "Invalid Request: method must be a string"
        if "id" in message and not _valid_id(message["id"]):
            return "Invalid Request: id must be a string, a number or null"
        if message.get("params") is not None and not isinstance(message["params"], (dict, list)):
            return "Invalid Request: params must be an object"
        return message
    if not _valid_id(message.get("id")) or message.get("id") is None:
        log.warning("ACP: dropped a message that is neither a request nor an answer")
        return None
    if "error" in message and not isinstance(message["error"], dict):
        # Settle our request as failed rather than leave it waiting.
        return {"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": INTERNAL_ERROR, "message": f"malformed error from the client: {message['error']!r}"[:300]}}
    if "error" in message and not isinstance(message["error"].get("code", INTERNAL_ERROR), int):
        return {**message, "error": {"code": INTERNAL_ERROR, "message": str(message["error"].get("message"))[:300]}}
    return message


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (int, str)) and not isinstance(value, bool))


def _plain_id(message: Any) -> Any:
    value = message.get("id") if isinstance(message, dict) else None
    return value if _valid_id(value) else None


def _head_id(line: bytes) -> Any:
    """The request id from the head of a line that could not be decoded, so its sender is answered."""
    found = _ID.search(line[:4096])
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None
