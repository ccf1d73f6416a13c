"""`TerminalUI`: the `UIPort` of the command line.

Approvals and questions are asked on stderr and answered on stdin (so stdout
stays clean for `--json`); reading stdin happens in a daemon thread so the
agent's event loop keeps running and a prompt left unanswered (the core's
`policy.approval_timeout_seconds`, or Ctrl-C) never keeps the process from
exiting. `n` denies; end of input (Ctrl-D, a script without answers) cancels
an approval or a question — a script never hangs, and a cancelled change stays
staged rather than rejected.

Long work (a model call, verification) is shown as it goes: on a terminal one
rewritten line with the tokens streamed so far and the elapsed time; otherwise
plain lines (at the start, every `PLAIN_EVERY` seconds, at the end) that a log
file or CI keeps readable.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TextIO

from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

_ANSWERS = {"y": "allow_once", "yes": "allow_once", "a": "always_allow", "always": "always_allow",
            "n": "deny", "no": "deny", "": "deny"}


PLAIN_EVERY = 10.0  # seconds between plain progress lines when stderr is not a terminal
TTY_EVERY = 0.5  # seconds between rewrites of the live line on a terminal


@dataclass
class _Activity:
    message: str
    started: float = field(default_factory=time.monotonic)
    tokens: int = 0  # streamed pieces (content and reasoning), about one token each

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        tokens = f", {self.tokens} tokens" if self.tokens else ""
        return f"… {self.message} ({elapsed:.0f}s{tokens})"


class TerminalUI:
    no_answer = "end of input"  # why an approval was left unanswered: cancelled, not denied

    def __init__(self, *, stdin: TextIO | None = None, err: TextIO | None = None,
                 show_stream: bool = False, show_reasoning: bool = False, tty: bool | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.err = err or sys.stderr
        self.show_stream = show_stream
        self.show_reasoning = show_reasoning
        self.tty = _isatty(self.err) if tty is None else tty
        self._streaming = False
        self._live = False  # the live progress line is on screen (terminal only)
        self._activities: dict[str, _Activity] = {}
        self._ticker: asyncio.TimerHandle | None = None
        self._reading: asyncio.Future[str] | None = None  # a line being read: a prompt given up keeps it

    def notify(self, title: str, message: str, *, session_id: str | None = None, waiting: bool = False) -> None:
        """A wait or a finish (extensions/notify.py): the terminal's bell, on a terminal only (the
        prompt or the result is already written; the bell brings back a person in another window)."""
        if self.tty:
            self.err.write("\a")
            self.err.flush()

    def _say(self, text: str) -> None:
        self._clear_live()
        if self._streaming:
            self.err.write("\n")
            self._streaming = False
        self.err.write(text + "\n")
        self.err.flush()

    # -- the live line ----------------------------------------------------------------

    def _clear_live(self) -> None:
        if self._live:
            self.err.write("\r\x1b[2K")
            self._live = False

    def _show_live(self) -> None:
        if not self._activities or self._streaming:
            return
        line = next(reversed(self._activities.values())).line()
        self.err.write("\r\x1b[2K" + line[: _width() - 1])
        self.err.flush()
        self._live = True

    def _tick(self) -> None:
        self._ticker = None
        if not self._activities:
            return
        if self.tty:
            self._show_live()
        else:
            for activity in self._activities.values():
                self._say(activity.line())
        self._schedule()

    def _schedule(self) -> None:
        if self._ticker is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # called outside the event loop: no ticking, start and end lines only
        self._ticker = loop.call_later(TTY_EVERY if self.tty else PLAIN_EVERY, self._tick)

    async def readline(self) -> str | None:
        """The next line of stdin without its newline; None at end of input. A prompt given up on (no
        answer in time, Ctrl-C) leaves its read going: a line typed after the next prompt is shown
        answers that prompt; one that came while no prompt was shown answers nothing."""
        if self._reading is not None and self._reading.done():
            self._reading = None  # typed for a prompt that was withdrawn: never an answer to this one
        if self._reading is None:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[str] = loop.create_future()
            threading.Thread(target=self._read_into, args=(loop, future), name="deepseek-ls stdin",
                             daemon=True).start()
            self._reading = future
        line = await asyncio.shield(self._reading)
        self._reading = None
        return None if line == "" else line.rstrip("\n")

    def _read_into(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[str]) -> None:
        try:
            line = self.stdin.readline()
        except (OSError, ValueError):  # stdin closed under us: end of input
            line = ""
        try:
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(line))
        except RuntimeError:
            pass  # the loop is gone: the command ended without this answer

    def show_request(self, request: ApprovalRequest) -> None:
        """What an approval would allow, shown before the question (the chat shows it with rich)."""
        self._say(f"\n── approval needed ({request.kind}) ──\n{request.title}")
        if request.command:
            self._say(f"command: {request.command}")
        if request.detail:
            self._say(request.detail.rstrip())

    async def ask_line(self, prompt: str) -> str | None:
        """`prompt`, then the line typed; None at end of input (the chat reads with prompt_toolkit)."""
        self.err.write(prompt)
        self.err.flush()
        return await self.readline()

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.show_request(request)
        try:
            while True:
                line = await self.ask_line("allow? [y]es once / [a]lways / [n]o: ")
                if line is None:  # not a decision on the request: cancelled, what it asked about stays
                    self._say(f"({self.no_answer}: cancelled)")
                    return ApprovalDecision(request_id=request.request_id, answer="cancel", reason=self.no_answer)
                answer = _ANSWERS.get(line.strip().lower())
                if answer is not None:
                    return ApprovalDecision(request_id=request.request_id, answer=answer)  # type: ignore[arg-type]
                self._say("please answer y, a or n")
        except asyncio.CancelledError:
            self._say("(not answered: the prompt was withdrawn)")  # no answer in time, or Ctrl-C
            raise

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        self._say(f"\n── the agent asks ──\n{question}")
        if choices:
            self._say("choices: " + ", ".join(choices))
        try:
            line = await self.ask_line("answer (empty to cancel): ")
        except asyncio.CancelledError:
            self._say("(not answered: the question was withdrawn)")
            raise
        return line if line and line.strip() else None

    def stream(self, channel: str, text: str, *, session_id: str | None = None) -> None:
        if channel in ("content", "reasoning"):
            for activity in self._activities.values():
                activity.tokens += 1
        if channel == "status":
            self._say(text)
        elif (channel == "content" and self.show_stream) or (channel == "reasoning" and self.show_reasoning):
            self._clear_live()
            self.err.write(text)
            self.err.flush()
            self._streaming = True

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        if done:
            activity = self._activities.pop(token, None)
            if activity is not None:
                elapsed = time.monotonic() - activity.started
                tokens = f", {activity.tokens} tokens" if activity.tokens else ""
                self._say(f"{message} ({elapsed:.1f}s{tokens})")
            if not self._activities and self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None
            return
        pct = f" {percentage}%" if percentage is not None else ""
        if token in self._activities:
            activity = self._activities[token]
            if not self.tty and percentage is None and activity.message != message:
                self._say(f"… {message}")  # a new state of the same work ("queued" -> "asking")
            activity.message = f"{message}{pct}"
        else:
            self._activities[token] = _Activity(f"{message}{pct}")
            if self.tty:
                self._show_live()
            else:
                self._say(f"… {message}{pct}")
        self._schedule()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _width() -> int:
    import shutil

    return shutil.get_terminal_size((100, 20)).columns


class RetryNotices(logging.Filter):
    """Shows the LLM client's retries as "attempt N/M failed: why; retrying in Xs" on the terminal.

    Installed on the `deepseek_ls.llm` logger by commands that call a model; other
    records pass through unchanged.
    """

    def __init__(self, say) -> None:
        super().__init__()
        self.say = say

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if "attempt %d/%d failed" not in str(record.msg) or len(args) != 5:
            return True
        role, attempt, total, error, wait = args
        why = getattr(error, "user_message", None) or str(error)
        self.say(f"{role}: attempt {attempt}/{total} failed: {why}; retrying in {wait:.1f}s")
        return False


def announce_retries(say) -> RetryNotices:
    """Route the LLM client's retry warnings through `say` (one line each); returns the filter.

    It replaces an earlier command's in this process (an in-process `cli.main`, the tests): that
    one's terminal may be gone, and being first it would take every notice."""
    withdraw_retries()
    notices = RetryNotices(say)
    logging.getLogger("deepseek_ls.llm").addFilter(notices)
    return notices


def withdraw_retries() -> None:
    """Stop announcing retries (the command that asked for them is over)."""
    logger = logging.getLogger("deepseek_ls.llm")
    for notices in [f for f in logger.filters if isinstance(f, RetryNotices)]:
        logger.removeFilter(notices)
