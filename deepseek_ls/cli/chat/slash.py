"""The slash-command table under the chat: a command's spec, the table, parsing and dispatch,
and `ChatLike`, what a handler may use of the chat.

It sits below every module that fills the table (`commands.py`, `rewind_cmd.py`, `custom.py`)
and below the chat itself (`app.py`), so none of them imports another in a circle: a handler
is typed against `ChatLike`, which `app.Chat` provides.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from deepseek_ls.agent.intent import TurnFlags
    from deepseek_ls.cli.chat.render import ChatUI

T = TypeVar("T")


class ChatLike(Protocol):
    """The chat as a handler sees it (`app.Chat`)."""

    agent: Any
    root: Path
    mode: str
    profile: str | None  # None: the router picks fast or max-think per call
    ui: ChatUI
    sessions: list[str]  # this chat's sessions, oldest first
    rewound: dict[str, list[str]]  # rewind id -> the prompts it took out of this chat (/rewind)
    leaving: bool

    def commands(self) -> dict[str, SlashCommand]: ...
    def say(self, text: str, *, dim: bool = False, style: str | None = None) -> None: ...
    def show(self, *renderables: Any) -> None: ...
    async def turn(self, text: str, flags: TurnFlags | None = None, *, mode: str | None = None,
                   profile: str | None = None, tool_limit: dict[str, Any] | None = None) -> None: ...
    async def resume(self, session_id: str | None) -> None: ...
    async def drive(self, work: Awaitable[T]) -> T | None: ...
    def set_conversation(self, sessions: list[str]) -> None: ...
    def model_label(self) -> str: ...
    def cost_text(self) -> str: ...
    def trust_workspace(self) -> None: ...


Handler = Callable[[ChatLike, str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    name: str  # without the slash
    args: str  # how its argument is written in /help ("" when it takes none)
    help: str
    handler: Handler


COMMANDS: dict[str, SlashCommand] = {}


def register(command: SlashCommand) -> SlashCommand:
    """Add `command` to the table (a name already taken raises `ValueError`)."""
    if command.name in COMMANDS:
        raise ValueError(f"/{command.name} is already a chat command")
    COMMANDS[command.name] = command
    return command


def parse(line: str) -> tuple[str, str] | None:
    """`(name, argument)` of a command line, or None when the line is a prompt (`//` escapes a slash)."""
    text = line.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, argument = text[1:].partition(" ")
    return name.lower(), argument.strip()


async def dispatch(chat: ChatLike, name: str, argument: str) -> None:
    known = chat.commands()  # the built-in ones, then the custom ones
    command = known.get(name)
    if command is None:
        chat.say(f"unknown command /{name}; known: {' '.join('/' + n for n in known)} (//{name} sends it as a prompt)")
        return
    await command.handler(chat, argument)
