"""Serving one client: on stdin/stdout (a reader thread with back-pressure) or on a TCP
port (debugging), feeding the `FrameParser` into the `HardenedProtocol` until `exit`,
the end of input or a broken pipe; the process's exit code."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import stat
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, BinaryIO

from deepseek_ls.lsp.transport.framing import FrameParser, FrameWriter
from deepseek_ls.lsp.transport.limits import Limits
from deepseek_ls.lsp.transport.protocol import HardenedProtocol

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class _StdinSource:
    """Reads stdin in a daemon thread (never keeps the process alive), with
    back-pressure: at most a few chunks wait for the event loop."""

    CHUNK = 64 * 1024

    def __init__(self, stdin: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=8)
        self._loop = loop
        self._fd = stdin.fileno()
        threading.Thread(target=self._run, name="deepseek-ls stdin", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, self.CHUNK)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(self._queue.put(chunk), self._loop).result()
            except Exception:  # noqa: BLE001 - the loop is gone: the server is exiting
                return
            if not chunk:
                return

    async def read(self) -> bytes:
        return await self._queue.get()


class _PipeSource(asyncio.Protocol):
    """Reads stdin on the event loop itself when it is a pipe or a socket (as editors start us):
    no thread, so a message is not handed from one thread to the other (and the GIL with it)
    before it is read, ~0.2 ms each on a busy machine. Back-pressure: reading pauses while a few
    chunks wait for the loop. (A terminal or a file keeps the thread: the loop would make the
    shared terminal non-blocking.)"""

    MAX_WAITING = 8

    def __init__(self) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._ready = asyncio.Event()
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    @classmethod
    def usable(cls, stdin: BinaryIO, stdout: BinaryIO | None = None) -> bool:
        """A pipe or a socket that is not also `stdout` (the loop makes what it reads non-blocking,
        and stdout is written blocking)."""
        if sys.platform == "win32":
            return False
        try:
            got = os.fstat(stdin.fileno())
        except (OSError, ValueError):
            return False
        try:
            out = os.fstat(stdout.fileno()) if stdout is not None else None
        except (AttributeError, OSError, ValueError):  # a writer that is no file (tests): not stdin's
            out = None
        if out is not None and (got.st_dev, got.st_ino) == (out.st_dev, out.st_ino):
            return False
        return stat.S_ISFIFO(got.st_mode) or stat.S_ISSOCK(got.st_mode)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._ready.set()
        if len(self._chunks) >= self.MAX_WAITING and self._transport is not None and not self._paused:
            self._paused = True
            self._transport.pause_reading()

    def eof_received(self) -> bool | None:
        self._chunks.append(b"")
        self._ready.set()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._chunks.append(b"")  # a read error ends the input as the end of input does
        self._ready.set()

    async def read(self) -> bytes:
        while not self._chunks:
            self._ready.clear()
            await self._ready.wait()
        chunk = self._chunks.popleft()
        if self._paused and len(self._chunks) < self.MAX_WAITING // 2 and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return chunk


async def _serve(protocol: HardenedProtocol, read: Callable[[], Awaitable[bytes]], limits: Limits) -> int:
    parser = FrameParser(limits)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    protocol.on_exit = lambda code: stop.set()
    writer = protocol.writer
    if isinstance(writer, FrameWriter):
        writer.on_broken = lambda: loop.call_soon_threadsafe(stop.set)
    reading = asyncio.ensure_future(_pump(protocol, parser, read, stop))
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    for task in (reading, stopping):
        task.cancel()
    if protocol.exit_code is not None:
        return protocol.exit_code
    # End of input (or a broken pipe) without `exit`.
    log.info("the client closed the connection")
    return 0 if protocol.shutdown_requested else 1


async def _pump(
    protocol: HardenedProtocol, parser: FrameParser, read: Callable[[], Awaitable[bytes]], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        chunk = await read()
        if not chunk:
            return
        for event in parser.feed(chunk):
            protocol.handle_frame(event)
            if protocol.exit_code is not None:
                return


def serve_stdio(server: LanguageServer, limits: Limits, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve one client on stdin/stdout until `exit` or end of input; the exit code."""
    protocol = server.protocol
    assert isinstance(protocol, HardenedProtocol), "create the server with protocol_cls=HardenedProtocol"
    protocol.limits = limits
    out = stdout or sys.stdout.buffer
    protocol.set_writer(FrameWriter(out.write, out.flush), include_headers=False)

    async def main() -> int:
        source_file = stdin or sys.stdin.buffer
        loop = asyncio.get_running_loop()
        if _PipeSource.usable(source_file, out):
            pipe = _PipeSource()
            await loop.connect_read_pipe(lambda: pipe, source_file)
            return await _serve(protocol, pipe.read, limits)
        source = _StdinSource(source_file, loop)
        return await _serve(protocol, source.read, limits)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 1


def serve_tcp(server: LanguageServer, limits: Limits, host: str, port: int) -> int:
    """Serve one client connection on HOST:PORT (debugging); the exit code."""
    protocol = server.protocol
    assert isinstance(protocol, HardenedProtocol), "create the server with protocol_cls=HardenedProtocol"
    protocol.limits = limits

    async def main() -> int:
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if done.done() or protocol.writer is not None:
                writer.close()
                return
            protocol.set_writer(FrameWriter(writer.write), include_headers=False)
            code = await _serve(protocol, lambda: reader.read(64 * 1024), limits)
            writer.close()
            if not done.done():
                done.set_result(code)

        tcp = await asyncio.start_server(connection, host, port)
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in tcp.sockets))
        async with tcp:
            return await done

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 1
