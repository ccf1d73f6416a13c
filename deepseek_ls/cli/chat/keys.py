"""Esc (and Ctrl-C) while a turn runs: cancel it.

Between prompts the terminal belongs to nobody, so the chat puts it in raw mode
through prompt_toolkit's own input (`Input.raw_mode`, `Input.attach`, its parser
of escape sequences) and watches the keys: Esc or Ctrl-C cancels the turn's task
(the session pauses, as Ctrl-C pauses `deepseek-ls run`); any other key is
dropped. A lone Esc is told from the start of an escape sequence (an arrow key)
the way prompt_toolkit tells it, by flushing the parser when no more bytes
follow. A prompt opened during the turn (an approval) attaches its own reader
over this one and gives the terminal back when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

from prompt_toolkit.input import Input
from prompt_toolkit.keys import Keys

ESCAPE_WAIT = 0.05  # seconds without another byte after ESC: a lone Esc, not a sequence
CANCEL_KEYS = (Keys.Escape, Keys.ControlC)


@contextlib.contextmanager
def cancel_on_escape(source: Input, cancel: Callable[[], None]) -> Iterator[None]:
    """While inside, Esc or Ctrl-C typed on `source` calls `cancel()` (once)."""
    loop = asyncio.get_running_loop()
    fired = False
    flush: asyncio.TimerHandle | None = None

    def handle(keys: list) -> None:
        nonlocal fired
        if not fired and any(k.key in CANCEL_KEYS for k in keys):
            fired = True
            cancel()

    def flushed() -> None:
        nonlocal flush
        flush = None
        handle(source.flush_keys())

    def ready() -> None:
        nonlocal flush
        handle(source.read_keys())
        if flush is not None:
            flush.cancel()
        flush = loop.call_later(ESCAPE_WAIT, flushed)

    with source.raw_mode(), source.attach(ready):
        try:
            yield
        finally:
            if flush is not None:
                flush.cancel()
