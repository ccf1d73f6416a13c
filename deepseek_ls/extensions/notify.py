"""Telling the person that a session waits for them or finished, wherever they are looking.

`NotifyingUI` wraps the adapter's UI port: before an approval or a question waits for the person,
and when a session finishes, it fires the Notification hook, shows a desktop notification through
`notify-send` where that is installed and a desktop session is there (never an error where it is
not), and tells the adapter (`notify(...)`, when the adapter has it: the language server sends
`deepseek/attention`, the terminal chat rings its bell).
`[notifications] enabled = false` turns the desktop and editor parts off; the hook follows
`[hooks]`. Everything else is passed through to the wrapped port unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from deepseek_ls.policy.redact import redact_text

log = logging.getLogger(__name__)

DESKTOP_SECONDS = 3.0  # notify-send returns at once; one that hangs is stopped after this
FireHook = Callable[[str, str, str | None], Awaitable[None]]  # (message, title, session_id)


class NotifyingUI:
    def __init__(self, inner: Any, config: Any, fire_hook: FireHook | None = None) -> None:
        self.inner = inner
        self.config = config
        self.fire_hook = fire_hook
        self._pending: set[asyncio.Future[None]] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def request_approval(self, request: Any) -> Any:
        if not getattr(self.inner, "quiet_waits", False):
            self.notify_soon(f"waits for your approval: {request.title}", "deepseek-ls needs your approval",
                             request.session_id, waiting=True)
        return await self.inner.request_approval(request)

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        if not getattr(self.inner, "quiet_waits", False):
            self.notify_soon(f"asks you: {question}", "deepseek-ls has a question", None, waiting=True)
        return await self.inner.ask_user(question, choices)

    def notify_soon(self, message: str, title: str, session_id: str | None, *, waiting: bool = False) -> None:
        """`notify` beside the work, not before it: a slow hook never eats into the person's time to
        answer an approval (which the core bounds) nor holds a finished request's answer."""
        task = asyncio.ensure_future(self.notify(message, title, session_id, waiting=waiting))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def aclose(self) -> None:
        """Stop the notifications still running (a hook is killed with its process group)."""
        for task in list(self._pending):
            task.cancel()
        for task in list(self._pending):
            with contextlib.suppress(BaseException):
                await task

    async def notify(self, message: str, title: str, session_id: str | None, *, waiting: bool = False) -> None:
        """The editor, then the Notification hook and the desktop side by side; none of them may stop
        the work. `waiting`: the person is asked something (the adapter's own prompt is on screen).
        The editor is told first and at once: a hook may take its whole timeout, and an editor's
        count of what waits must not lag behind the wait itself."""
        message = redact_text(message)[:300]
        if self.config.enabled:
            told = getattr(self.inner, "notify", None)
            if callable(told):
                try:
                    told(title, message, session_id=session_id, waiting=waiting)
                except Exception:  # an adapter's notice is a courtesy: logged, never the work's failure
                    log.exception("telling the editor failed")
        side_by_side = [self._hook(message, title, session_id)]
        if self.config.enabled and self.config.desktop:
            side_by_side.append(desktop(title, message))
        await asyncio.gather(*side_by_side)

    async def _hook(self, message: str, title: str, session_id: str | None) -> None:
        if self.fire_hook is None:
            return
        try:
            await self.fire_hook(message, title, session_id)
        except Exception:  # a hook's failure is said by the hook runner; this is a bug guard
            log.exception("the Notification hook failed")


def desktop_session(env: Mapping[str, str] | None = None) -> bool:
    """A desktop to show a notification on: an X or Wayland display, or a D-Bus session bus (what
    `notify-send` talks to). Over SSH or in a container there is none, and nothing is tried."""
    env = os.environ if env is None else env
    return any(env.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"))


async def desktop(title: str, message: str) -> bool:
    """`notify-send TITLE MESSAGE` when it is installed and there is a desktop session; False when
    not or when it did not work (never an error: the desktop is a courtesy). Bounded: one that
    hangs is killed after `DESKTOP_SECONDS`."""
    program = shutil.which("notify-send")
    if program is None or not desktop_session():
        return False
    try:
        proc = await asyncio.create_subprocess_exec(program, "--app-name=deepseek-ls", title, message,
                                                    stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL,
                                                    start_new_session=True)
    except OSError:
        return False
    try:
        return await asyncio.wait_for(proc.wait(), DESKTOP_SECONDS) == 0
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 1.0)
        return False
