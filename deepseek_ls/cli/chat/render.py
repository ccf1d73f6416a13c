"""`ChatUI`: the chat's `UIPort`, and how a plan, a patch and a tool call look in the terminal.

Approvals and questions are `TerminalUI`'s (`cli/terminal_ui.py`), the same prompts
and answers as `deepseek-ls run` — y / a / n, end of input or Esc cancels (not a
deny: the change stays staged) — only shown with rich (a patch as a coloured
diff) and, on a terminal, read with prompt_toolkit (`reader`), so no thread is
left reading the terminal once a prompt is withdrawn. What streams is rendered as it arrives (`StreamView`): the
answer of a `chat` call as Markdown, reasoning dim and collapsed; the planner's
and executor's own output (a plan's JSON, a diff) is counted, not shown — the plan
comes as a table once made, the diff with its approval. Off a terminal (a pipe, a
script), the answer is written to stdout as it comes and the rest is plain lines
on stderr, as `run` prints them.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console, Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from deepseek_ls.cli.chat.stream_view import StreamView
from deepseek_ls.cli.terminal_ui import TerminalUI
from deepseek_ls.ui_port import ApprovalRequest

ANSWER_ROLES = ("chat", "ask")  # model calls whose streamed content is the answer to show
STATUS = {"pending": "·", "running": "▶", "done": "✓", "failed": "✗", "skipped": "–"}

Reader = Callable[[str], Awaitable["str | None"]]


class ChatUI(TerminalUI):
    def __init__(self, console: Console, *, reader: Reader | None = None, show_reasoning: bool = False) -> None:
        super().__init__(err=console.file if console.is_terminal else sys.stderr, show_stream=False,
                         tty=console.is_terminal)
        self.console = console
        self.reader = reader  # prompt_toolkit on a terminal; None: TerminalUI's line reader
        if reader is not None:
            self.no_answer = "dismissed"  # Esc, Ctrl-C or Ctrl-D at the prompt: cancelled, not denied
        self.view = StreamView(console) if console.is_terminal else None
        self.show_all_reasoning = show_reasoning
        self.last_reasoning = ""  # of the latest answer (`/reasoning`)
        self.answered = False  # the latest `chat` call's answer was shown as it streamed
        self._roles: dict[str, str] = {}  # progress token -> the role of the model call it follows
        self._answering = 0  # `chat` calls in progress

    # -- what the person is asked ------------------------------------------------------------

    def _say(self, text: str) -> None:
        if self.view is None:
            super()._say(text)
            return
        self.view.suspend()
        self.console.print(Text(text))

    def show_request(self, request: ApprovalRequest) -> None:
        """An approval request: what it would do, a patch as a coloured diff."""
        self.pause()
        body: list[Any] = [Text(f"approval needed ({request.kind}): {request.title}", style="bold yellow")]
        if request.command:
            body.append(Text(f"command: {request.command}"))
        if request.detail:
            body.append(diff_view(request.detail) if request.kind == "patch.apply" else Text(request.detail.rstrip()))
        self.console.print(Group(*body))

    async def ask_line(self, prompt: str) -> str | None:
        """One line typed by the person after `prompt`; None when they cancelled (Esc, Ctrl-C, Ctrl-D)."""
        self.pause()
        if self.reader is None:
            return await super().ask_line(prompt)
        return await self.reader(prompt)

    def pause(self) -> None:
        """Stop redrawing the live area: something is printed or asked below it."""
        if self.view is not None:
            self.view.suspend()
        else:
            self._clear_live()

    # -- what streams --------------------------------------------------------------------------

    def stream(self, channel: str, text: str, *, session_id: str | None = None) -> None:
        if channel == "status":
            self.status(text.rstrip("\n"))
            return
        answering = self._answering > 0
        if self.view is None:
            super().stream(channel, text, session_id=session_id)  # token counts for the progress lines
            if channel == "content" and answering:
                self._clear_live()
                sys.stdout.write(text)
                sys.stdout.flush()
                self.answered = True
            elif channel == "reasoning" and answering:
                self.last_reasoning += text
            return
        self.view.count_token()
        if channel == "content" and answering:
            self.view.add_answer(text)
            self.answered = True
        elif channel == "reasoning" and answering:
            self.last_reasoning += text
            if self.show_all_reasoning:
                self.view.print(Text(text, style="dim italic"), end="")
            else:
                self.view.add_reasoning(text)

    def status(self, text: str) -> None:
        if self.view is None:
            super()._say(text)
        else:
            self.view.print(Text(text, style="dim"))

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        role = token.rsplit("-", 1)[-1] if token.startswith("deepseek-") else None
        if not done and token not in self._roles:
            self._roles[token] = role or ""
            if role in ANSWER_ROLES:
                self._answering += 1
                self.last_reasoning, self.answered = "", False
        if done and self._roles.pop(token, None) in ANSWER_ROLES:
            self._answering -= 1
            self._end_answer()
        if self.view is None:
            super().progress(token, message, percentage, done=done)
            return
        if done:
            line = self.view.end(token, message)
            if line is not None:
                self.view.print(Text(line, style="dim"))
        else:
            self.view.start(token, f"{message}{f' {percentage}%' if percentage is not None else ''}")

    def _end_answer(self) -> None:
        if self.view is not None:
            self.view.finish()
        elif self.answered:
            sys.stdout.write("\n")
            sys.stdout.flush()

    # -- what the chat shows -------------------------------------------------------------------

    def tool_called(self, name: str, summary: str, ok: bool, *, session_id: str | None = None) -> None:
        """One compact line per tool the model called (`ToolCallView`)."""
        mark = "✓" if ok else "✗"
        self.status(f"  ⎿ {name} {summary} {mark}".rstrip())

    def show(self, *renderables: Any) -> None:
        """Print above whatever is live (a plan table, a diff, a notice)."""
        if self.view is not None:
            self.view.print(*renderables)
        else:
            self._clear_live()
            self.console.print(*renderables)


def plan_table(plan: dict[str, Any]) -> Table:
    """A plan as a table: one row per step with its status, title, intent and files."""
    table = Table(title=f"Plan v{plan.get('version', 1)}: {plan.get('goal', '')}", title_justify="left",
                  show_lines=False, expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("", no_wrap=True)
    table.add_column("step")
    table.add_column("intent", style="dim")
    table.add_column("files", style="cyan")
    for number, step in enumerate(plan.get("steps") or [], start=1):
        table.add_row(str(number), STATUS.get(step.get("status", ""), "?"), step.get("title", ""),
                      step.get("intent", ""), ", ".join(step.get("files") or []) or "-")
    captions = []
    for label, key in (("verify", "verification"), ("risks", "risk_notes")):
        if plan.get(key):
            captions.append(f"{label}: " + "; ".join(plan[key]))
    if plan.get("no_edit_reason"):
        captions.append(f"no change: {plan['no_edit_reason']}")
    table.caption = "\n".join(captions) or None
    table.caption_justify = "left"
    return table


def diff_view(diff: str) -> Syntax:
    """A unified diff, coloured (added green, removed red), as the terminal's theme allows."""
    return Syntax(diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default", word_wrap=True)
