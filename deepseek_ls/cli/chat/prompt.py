"""What the person types in the chat, on a terminal: prompt_toolkit's line editor.

- the prompt shows the mode, the model and (when known) how full the context is;
- Enter sends; Alt+Enter, Ctrl-J or a line ending in `\\` starts a new line
  (a pasted block stays one message);
- history is kept per workspace in `.deepseek/chat_history`, each line through
  the secret redaction first (a key pasted by mistake is not kept), and ↑/↓ or
  Ctrl-R recall it;
- `/` completes commands, `@` completes workspace files (`completion.py`);
- Tab cycles the mode when there is nothing to complete, Shift-Tab backwards;
- Ctrl-C clears the line, Ctrl-D on an empty line leaves.

Approvals and questions during a turn are asked with `answer` (no history; Esc,
Ctrl-C or Ctrl-D cancel): the same `Input` as the key watcher of `keys.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import ThreadedCompleter
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.styles import Style

from deepseek_ls.cli.chat.completion import ChatCompleter

HISTORY_NAME = "chat_history"
STYLE = Style.from_dict({
    "mode.plan": "bg:ansiblue fg:ansiwhite bold", "mode.agent": "bg:ansigreen fg:ansiblack bold",
    "mode.yolo": "bg:ansired fg:ansiwhite bold", "mode.hetun": "bg:ansimagenta fg:ansiwhite bold",
    "model": "fg:ansicyan", "meter": "fg:ansiyellow", "bottom-toolbar": "noreverse fg:ansibrightblack",
})
TOOLBAR = " Tab mode · Esc cancels a turn · /help · @file · Alt+Enter new line · Ctrl-D leaves"


class RedactedHistory(FileHistory):
    """The chat's history file: what is kept went through the secret redaction first."""

    def store_string(self, string: str) -> None:
        from deepseek_ls.policy.redact import redact_text

        super().store_string(redact_text(string))


class ChatInput:
    def __init__(self, state_dir: Path, completer: ChatCompleter, *, label: Callable[[], list[tuple[str, str]]],
                 cycle: Callable[[bool], str | None]) -> None:
        """`label()`: the prompt's (style, text) pieces; `cycle(backwards)`: change the mode, returning
        a note to print (a skipped mode and why) or None."""
        self.source: Input = create_input()
        self._label = label
        self._cycle = cycle
        self.session: PromptSession[str] = PromptSession(
            history=RedactedHistory(str(state_dir / HISTORY_NAME)), completer=ThreadedCompleter(completer),
            complete_while_typing=True, multiline=True, key_bindings=self._bindings(), style=STYLE,
            bottom_toolbar=TOOLBAR, prompt_continuation=lambda width, line, wrap: "… ".rjust(width),
            input=self.source, enable_history_search=False, mouse_support=False,
        )
        self._answers: PromptSession[str] = PromptSession(key_bindings=_answer_bindings(), input=self.source,
                                                          style=STYLE)

    async def read(self) -> str | None:
        """The next message; None when the person leaves (Ctrl-D). Ctrl-C clears the line and asks again."""
        while True:
            try:
                return await self.session.prompt_async(lambda: FormattedText(self._label()))
            except KeyboardInterrupt:
                continue
            except EOFError:
                return None

    async def answer(self, prompt: str) -> str | None:
        """One line for an approval or a question; None when cancelled (Esc, Ctrl-C, Ctrl-D)."""
        try:
            return await self._answers.prompt_async(prompt)
        except (KeyboardInterrupt, EOFError):
            return None

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()
        completing = has_completions | Condition(lambda: _completable(self.session.default_buffer.document))

        @kb.add("enter", filter=~has_completions)
        def _send(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.document.text_before_cursor.endswith("\\") and buffer.document.is_cursor_at_the_end:
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
            else:
                buffer.validate_and_handle()

        @kb.add("enter", filter=has_completions)
        def _choose(event: KeyPressEvent) -> None:
            # A completion picked with Tab or ↓ is taken and the line stays; none picked: the menu
            # only showed what matches, and Enter sends what was typed (`/model` then Enter runs it).
            buffer = event.current_buffer
            state = buffer.complete_state
            buffer.complete_state = None
            if state is None or state.current_completion is None:
                _send(event)

        @kb.add("escape", "enter")
        @kb.add("c-j")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @kb.add("tab", filter=completing)
        def _complete(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.complete_state:
                buffer.complete_next()
            else:
                buffer.start_completion(select_first=False)

        @kb.add("tab", filter=~completing)
        def _mode(event: KeyPressEvent) -> None:
            self._changed(event, backwards=False)

        @kb.add("s-tab", filter=~has_completions)
        def _mode_back(event: KeyPressEvent) -> None:
            self._changed(event, backwards=True)

        return kb

    def _changed(self, event: KeyPressEvent, *, backwards: bool) -> None:
        note = self._cycle(backwards)
        if note:
            run_in_terminal(lambda: print(note))
        event.app.invalidate()


def _completable(document) -> bool:
    """The word at the cursor is a command or a mention: Tab completes it instead of changing the mode."""
    before = document.text_before_cursor
    return (before.startswith("/") and " " not in before) or document.get_word_before_cursor(WORD=True).startswith("@")


def _answer_bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", eager=True)
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    return kb
