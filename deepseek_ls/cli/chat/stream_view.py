"""The live part of the chat's screen while a turn runs: the answer as Markdown, reasoning, activity.

A terminal cannot redraw what has scrolled off its top, so the streamed answer is
rendered as Markdown on every update and split: the lines above the last
`WINDOW` are printed once and for all, the rest stay in a `rich.live.Live` area
that is redrawn (the approach of Aider's `mdstream`). Reasoning is shown dim, its
last lines only, and collapses to one line when the answer starts (the chat's
`/reasoning` shows it whole). Below them, one dim line per model call or
command in progress, with its elapsed time and the tokens streamed so far.

No thread: the area is redrawn when text arrives (at most `FPS` times a second)
and by a timer on the event loop for the elapsed time.
"""

from __future__ import annotations

import asyncio
import io
import time
from dataclasses import dataclass, field

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

WINDOW = 8  # lines of the answer kept redrawable at the bottom
REASONING_LINES = 3  # lines of reasoning shown while it streams
FPS = 10
TICK = 0.5  # seconds between redraws for the elapsed time


@dataclass
class Activity:
    message: str
    started: float = field(default_factory=time.monotonic)
    tokens: int = 0

    def line(self) -> str:
        tokens = f", {self.tokens} tokens" if self.tokens else ""
        return f"… {self.message} ({time.monotonic() - self.started:.0f}s{tokens})"

    def ended(self, message: str) -> str:
        tokens = f", {self.tokens} tokens" if self.tokens else ""
        return f"{message} ({time.monotonic() - self.started:.1f}s{tokens})"


class StreamView:
    """The redrawable bottom of the screen during a turn (a terminal only)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.answer = ""
        self.reasoning = ""
        self.activities: dict[str, Activity] = {}
        self._printed = 0  # lines of the answer's rendering already printed for good
        self._live: Live | None = None
        self._last_draw = 0.0
        self._ticker: asyncio.TimerHandle | None = None

    # -- what arrives ---------------------------------------------------------------------

    def add_answer(self, text: str) -> None:
        if self.reasoning and not self.answer:
            self._collapse_reasoning()
        self.answer += text
        self._draw()

    def add_reasoning(self, text: str) -> None:
        self.reasoning += text
        self._draw()

    def count_token(self) -> None:
        for activity in self.activities.values():
            activity.tokens += 1

    def start(self, token: str, message: str) -> None:
        if token in self.activities:
            self.activities[token].message = message
        else:
            self.activities[token] = Activity(message)
        self._draw(force=True)
        self._schedule()

    def end(self, token: str, message: str) -> str | None:
        """The activity's last line ("planner: done (2.1s, 40 tokens)"), or None when it never started."""
        activity = self.activities.pop(token, None)
        self._draw(force=True)
        return activity.ended(message) if activity is not None else None

    # -- printing above it ------------------------------------------------------------------

    def print(self, *renderables: RenderableType) -> None:
        """Print above the live area (or plainly when there is none)."""
        self.console.print(*renderables)

    def finish(self) -> str:
        """Print what is left of the answer for good and stop redrawing; returns the answer."""
        answer = self.answer
        if self.answer:
            lines = self._rendered()
            for line in lines[self._printed:]:
                self.console.print(line)
        elif self.reasoning:
            self._collapse_reasoning()
        self.answer, self.reasoning, self._printed = "", "", 0
        self._stop()
        return answer

    def suspend(self) -> None:
        """Stop redrawing (a prompt takes the terminal); the next update starts again."""
        if self.answer:
            self.finish()
        self._stop()

    # -- drawing ---------------------------------------------------------------------------

    def _collapse_reasoning(self) -> None:
        words = len(self.reasoning.split())
        self.console.print(Text(f"▸ reasoning: {words} words (/reasoning shows it)", style="dim italic"))
        self.reasoning = ""

    def _rendered(self) -> list[Text]:
        buffer = io.StringIO()
        Console(file=buffer, width=self.console.width, force_terminal=True, color_system=self.console.color_system,
                legacy_windows=False).print(Markdown(self.answer))
        return [Text.from_ansi(line) for line in buffer.getvalue().rstrip("\n").split("\n")]

    def _draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < 1 / FPS:
            return
        self._last_draw = now
        parts: list[RenderableType] = []
        if self.reasoning:
            tail = self.reasoning.rstrip().splitlines()[-REASONING_LINES:]
            parts.append(Text("\n".join(tail), style="dim italic"))
        if self.answer:
            lines = self._rendered()
            settled = max(len(lines) - WINDOW, self._printed)
            if self._live is not None:
                for line in lines[self._printed:settled]:
                    self._live.console.print(line)
            self._printed = settled
            parts.append(Text("\n").join(lines[settled:]))
        parts.extend(Text(a.line(), style="dim") for a in self.activities.values())
        if not parts:
            self._stop()
            return
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=False, transient=True,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start()
        self._live.update(Group(*parts), refresh=True)

    def _stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _tick(self) -> None:
        self._ticker = None
        if self.activities:
            self._draw(force=True)
            self._schedule()

    def _schedule(self) -> None:
        if self._ticker is not None:
            return
        try:
            self._ticker = asyncio.get_running_loop().call_later(TICK, self._tick)
        except RuntimeError:
            pass  # outside the event loop: no elapsed-time redraws
