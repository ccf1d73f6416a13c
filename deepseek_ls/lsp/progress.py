"""Work-done progress (`$/progress`) with cancellation, and streamed text
(`deepseek/stream`).

`work_done(ls, title)` wraps a long piece of work started by the server: it
creates a token, reports begin/end, and cancels the work when the client sends
`window/workDoneProgress/cancel`. `ProgressTokens` maps the core's
`UIPort.progress(token, ...)` calls onto `$/progress`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import TYPE_CHECKING, AsyncIterator

from lsprotocol import types

from deepseek_ls.lsp import names

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

log = logging.getLogger(__name__)
_counter = itertools.count(1)


def _supported(ls: DeepSeekServer) -> bool:
    return ls.client_supports("window", "work_done_progress")


def _new_token(prefix: str) -> str:
    return f"deepseek-{prefix}-{next(_counter)}"


@contextlib.asynccontextmanager
async def work_done(
    ls: DeepSeekServer, title: str, *, cancellable: bool = True
) -> AsyncIterator[str | None]:
    """Report begin/end around the body; a client cancel cancels the current task
    (the body sees `asyncio.CancelledError`). Yields the token (None if the
    client does not support work-done progress)."""
    if not _supported(ls):
        yield None
        return
    token = _new_token("work")
    try:
        await ls.work_done_progress.create_async(token)
    except Exception as error:  # noqa: BLE001 - progress is a courtesy, not a requirement
        log.warning("client refused a progress token: %s", error)
        yield None
        return
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    cancel_future = ls.work_done_progress.tokens.get(token)
    if cancel_future is not None and task is not None:
        # The client's cancel notification cancels this concurrent Future; carry it
        # over to the task doing the work.
        cancel_future.add_done_callback(
            lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None
        )
    ls.work_done_progress.begin(
        token, types.WorkDoneProgressBegin(title=title, cancellable=cancellable)
    )
    message = "done"
    try:
        yield token
    except asyncio.CancelledError:
        message = "cancelled"
        raise
    except Exception:
        message = "failed"
        raise
    finally:
        ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        ls.work_done_progress.tokens.pop(token, None)


def report(ls: DeepSeekServer, token: str | None, message: str, percentage: int | None = None) -> None:
    if token is None:
        return
    ls.work_done_progress.report(
        token, types.WorkDoneProgressReport(message=message, percentage=percentage)
    )


class ProgressTokens:
    """`UIPort.progress` on LSP: the core names its own tokens; the first report of
    a token begins a `$/progress`, later ones report, `done=True` ends it.

    The core calls this synchronously; each token gets a small task that waits
    for the client's answer to `window/workDoneProgress/create` before sending
    anything on that token (as the spec asks), then forwards the reports in order.
    """

    def __init__(self, ls: DeepSeekServer) -> None:
        self._ls = ls
        self._open: dict[str, asyncio.Queue[tuple[str, int | None, bool]]] = {}

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        if not _supported(self._ls):
            return
        queue = self._open.get(token)
        if queue is None:
            if done:
                return
            try:
                queue = asyncio.Queue()
                self._ls.tasks.spawn(self._forward(queue), f"progress {token}")
            except RuntimeError:  # not on the event loop: progress is a courtesy
                log.debug("progress %s reported off the event loop; not shown", token)
                return
            self._open[token] = queue
        queue.put_nowait((message, percentage, done))
        if done:
            self._open.pop(token, None)

    async def _forward(self, queue: asyncio.Queue[tuple[str, int | None, bool]]) -> None:
        ls = self._ls
        lsp_token = _new_token("core")
        try:
            await ls.work_done_progress.create_async(lsp_token)
        except Exception as error:  # noqa: BLE001 - the client may refuse progress
            log.debug("client refused progress token: %s", error)
            return
        message, percentage, done = await queue.get()
        ls.work_done_progress.begin(
            lsp_token, types.WorkDoneProgressBegin(title=message, percentage=percentage, cancellable=False)
        )
        try:
            while not done:
                message, percentage, done = await queue.get()
                if not done:
                    report(ls, lsp_token, message, percentage)
        finally:
            ls.work_done_progress.end(lsp_token, types.WorkDoneProgressEnd(message=message))
            ls.work_done_progress.tokens.pop(lsp_token, None)


def stream(ls: DeepSeekServer, channel: str, text: str, session_id: str | None) -> None:
    """`deepseek/stream`: a piece of streamed model output or status text."""
    ls.notify(names.NOTIFY_STREAM, {"session_id": session_id, "channel": channel, "text": text})


def register(server: DeepSeekServer) -> None:
    # Cancellation arrives through pygls' built-in handler; nothing to register.
    return None
