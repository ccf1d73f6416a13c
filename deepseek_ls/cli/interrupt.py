"""Ctrl-C that always reaches a command's event loop, whichever thread the kernel gave it to.

`asyncio.run` turns the first SIGINT into a cancel of the command's task (the
session is paused and the command says how to resume it). Its handler is a
Python function, and Python runs signal handlers in the main thread only, the
next time that thread runs Python code. The kernel may hand a process's SIGINT
to any of its threads (the event-log writer, a thread reading stdin, counting
tokens or running git): the thread's C handler only notes it, and the main
thread, asleep in the event loop's `epoll_wait` with nothing due (a model
answer the server holds, a prompt waiting for input), would not see it until
something else woke the loop — seconds, or never. A wakeup fd
(`signal.set_wakeup_fd`) makes every caught signal write a byte the loop
watches, from whichever thread caught it, so the main thread wakes and runs the
handler at once. An ignored SIGINT (a background job's) stays ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    """`asyncio.run(main())`, with every signal the process catches waking the loop."""

    async def woken() -> T:
        with wake_on_signals(asyncio.get_running_loop()):
            return await main()

    return asyncio.run(woken())


@contextlib.contextmanager
def wake_on_signals(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """While inside, a signal caught by any thread wakes `loop` (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    rsock, wsock = socket.socketpair()
    rsock.setblocking(False)
    wsock.setblocking(False)
    previous = signal.set_wakeup_fd(wsock.fileno(), warn_on_full_buffer=False)
    loop.add_reader(rsock.fileno(), _drain, rsock)
    try:
        yield
    finally:
        loop.remove_reader(rsock.fileno())
        current = signal.set_wakeup_fd(previous)
        if current != wsock.fileno():  # someone inside set their own (asyncio's add_signal_handler): keep it
            signal.set_wakeup_fd(current)
        rsock.close()
        wsock.close()


def _drain(sock: socket.socket) -> None:
    # The bytes are signal numbers; waking up was the point (the handlers run from the interpreter).
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while sock.recv(4096):
            pass
