"""Background tasks of the server: tracked, named, and never failing silently."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable, Coroutine

log = logging.getLogger(__name__)

ErrorHandler = Callable[[str, BaseException], None]


class BackgroundTasks:
    """Keeps a reference to every task (so none is garbage-collected mid-flight)
    and logs the exception of any that fails; `on_error` lets the server tell the
    person as well."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self.on_error: ErrorHandler | None = None

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            return
        log.error("background task %s failed", task.get_name(), exc_info=error)
        if self.on_error is not None:
            try:
                self.on_error(task.get_name(), error)
            except Exception:  # noqa: BLE001 - reporting must not raise out of a callback
                log.exception("could not report the failure of %s", task.get_name())

    @property
    def running(self) -> list[str]:
        return sorted(t.get_name() for t in self._tasks if not t.done())

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
