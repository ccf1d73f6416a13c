"""stdin read on the event loop when it is a pipe (lsp/transport/serving._PipeSource): chunks
come in order, reading pauses while a few wait (back-pressure) and resumes as they are taken,
the end of input reads as b""; a regular file, or one socket that is also stdout, keeps the
reader thread."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from deepseek_ls.lsp.transport.serving import _PipeSource


async def _until(done) -> None:
    async with asyncio.timeout(5):
        while not done():
            await asyncio.sleep(0.001)


async def test_a_pipe_is_read_on_the_loop_in_order_with_back_pressure():
    read_fd, write_fd = os.pipe()
    source = os.fdopen(read_fd, "rb", buffering=0)
    assert _PipeSource.usable(source)
    pipe = _PipeSource()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: pipe, source)
    try:
        sent = [bytes([65 + i]) * 100 for i in range(_PipeSource.MAX_WAITING)]
        for number, chunk in enumerate(sent, 1):
            os.write(write_fd, chunk)
            await _until(lambda: len(pipe._chunks) == number)  # one chunk per write: the loop read it
        assert not transport.is_reading()  # a few wait: reading paused
        got = [await pipe.read() for _ in range(len(sent) // 2 + 1)]
        assert transport.is_reading()  # taken: reading again
        os.write(write_fd, b"last")
        os.close(write_fd)
        while (chunk := await pipe.read()) != b"":
            got.append(chunk)
        assert b"".join(got) == b"".join(sent) + b"last"
    finally:
        transport.close()


def test_a_regular_file_or_a_socket_that_is_also_stdout_keeps_the_reader_thread(tmp_path: Path):
    (tmp_path / "input").write_bytes(b"Content-Length: 2\r\n\r\n{}")
    with open(tmp_path / "input", "rb") as source:
        assert not _PipeSource.usable(source)
    ours, theirs = socket.socketpair()
    with ours, theirs, os.fdopen(os.dup(ours.fileno()), "rb") as stdin, os.fdopen(os.dup(ours.fileno()), "wb") as stdout:
        assert _PipeSource.usable(stdin)  # a socket alone: on the loop
        assert not _PipeSource.usable(stdin, stdout)  # one socket both ways: non-blocking would reach stdout
