"""One kept-alive HTTP/1.1 connection for fill-in-the-middle calls: h11 over asyncio streams.

A suggestion is worth milliseconds, and an httpx request costs ~1.5 ms of CPU in its client,
pool and anyio layers (bench/bench_inline.py, profiled): more than everything else the server
does for a keystroke. A FIM call is one small POST after another to one origin, so `FimHttp`
keeps one connection and speaks HTTP/1.1 with h11, the protocol library under httpx. Where it
does not fit, the FIM client keeps using httpx (`llm/fim.py`): a proxy in the environment, a
transport a test gives.

Failures raise httpx's exceptions (`ConnectError`, `ConnectTimeout`, `ReadTimeout`, `ReadError`,
`RemoteProtocolError`, `DecodingError`), so a caller maps them as it maps httpx's. A connection
the server closed while it was idle is not reused (as httpx's pool; a request is never sent
twice). Cancelling a call aborts its connection: the server sees the hang-up and stops
generating (no tokens paid for a suggestion nobody will see).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import h11
import httpx

READ_CHUNK = 64 * 1024


def proxied(url: str) -> bool:
    """Whether the environment names a proxy for `url`'s scheme (httpx honours it; `FimHttp` does
    not speak to proxies, so such a call goes through httpx)."""
    proxies = urllib.request.getproxies()
    return bool(proxies.get(urlsplit(url).scheme) or proxies.get("all"))


@dataclass
class FimResponse:
    """What `llm/fim.py` reads of an answer (the names an `httpx.Response` has)."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class _Connection:
    def __init__(self, origin: tuple[str, str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.origin = origin
        self.reader = reader
        self.writer = writer
        self.protocol = h11.Connection(h11.CLIENT)

    def usable(self) -> bool:
        return (self.protocol.our_state is h11.IDLE and not self.reader.at_eof()
                and not self.writer.is_closing())

    def abort(self) -> None:
        self.writer.transport.abort()

    async def exchange(self, target: str, headers: list[tuple[str, str]], body: bytes,
                       read_timeout: float) -> FimResponse:
        send = self.protocol.send
        # Headers and body in one write: one segment, no wait between them.
        data = send(h11.Request(method="POST", target=target, headers=headers))
        self.writer.write(b"".join((data or b"", send(h11.Data(data=body)) or b"", send(h11.EndOfMessage()) or b"")))
        head: h11.Response | None = None
        chunks: list[bytes] = []
        received = False
        while True:
            try:
                event = self.protocol.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from None
            if event is h11.NEED_DATA:
                try:
                    async with asyncio.timeout(read_timeout):
                        raw = await self.reader.read(READ_CHUNK)
                except TimeoutError:
                    raise httpx.ReadTimeout(f"no answer within {read_timeout:g} s") from None
                except OSError as exc:
                    raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
                if not raw and not received:
                    raise httpx.RemoteProtocolError("the server closed the connection without answering")
                received = True
                self.protocol.receive_data(raw)
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise httpx.RemoteProtocolError("the server closed the connection before its answer ended")
        assert head is not None
        headers_out = httpx.Headers([(name.decode("latin-1"), value.decode("latin-1"))
                                     for name, value in head.headers])
        coding = headers_out.get("content-encoding", "identity").strip().lower()
        if coding not in ("", "identity"):
            raise httpx.DecodingError(f"the answer came encoded as {coding!r} though the request asked for "
                                      "none (Accept-Encoding: identity)")
        if self.protocol.our_state is h11.DONE and self.protocol.their_state is h11.DONE:
            self.protocol.start_next_cycle()
        return FimResponse(head.status_code, headers_out, b"".join(chunks))


class FimHttp:
    """POSTs of JSON over one kept-alive connection (to the origin of the latest call)."""

    def __init__(self, *, connect_timeout: float, read_timeout: float, user_agent: str) -> None:
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.user_agent = user_agent
        self._idle: _Connection | None = None
        self._tls: ssl.SSLContext | None = None

    async def post(self, url: str, body: Any, headers: dict[str, str]) -> FimResponse:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise httpx.UnsupportedProtocol(f"cannot POST to {url!r}: not an http(s) URL")
        origin = (parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        host = parts.netloc.rsplit("@", 1)[-1]
        sent = [("Host", host), ("User-Agent", self.user_agent), ("Accept", "application/json"),
                ("Accept-Encoding", "identity"), ("Content-Type", "application/json"),
                ("Content-Length", str(len(data))), *headers.items()]
        connection = self._take(origin) or await self._connect(origin)
        try:
            response = await connection.exchange(target, sent, data, self.read_timeout)
        except BaseException:
            connection.abort()  # cancelled or failed: the server sees the hang-up
            raise
        if connection.usable():
            self._idle = connection
        else:
            connection.writer.close()
        return response

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        """The kept connection when it is to `origin` and still open (closed otherwise)."""
        connection, self._idle = self._idle, None
        if connection is not None and connection.origin == origin and connection.usable():
            return connection
        if connection is not None:
            connection.writer.close()
        return None

    async def _connect(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = httpx.create_ssl_context()  # certifi, or SSL_CERT_FILE / SSL_CERT_DIR, as httpx
            tls = self._tls
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(host, port, ssl=tls, limit=READ_CHUNK)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} within {self.connect_timeout:g} s") from None
        except OSError as exc:  # refused, unreachable, DNS, a TLS failure (ssl.SSLError is an OSError)
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(origin, reader, writer)

    async def aclose(self) -> None:
        connection, self._idle = self._idle, None
        if connection is not None:
            connection.writer.close()
