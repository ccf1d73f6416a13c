"""The chat's custom commands (`extensions/commands.py`): offered beside the built-in ones.

Each custom command becomes a `SlashCommand` whose handler expands it and sends the prompt as a
turn: in `/help`, in `/` completion (with its argument hint and description) and by `dispatch`.
The files are read again at most every `REFRESH` seconds, so a command written during the chat
appears. A file left out (malformed frontmatter, a name taken) is said once; the untrusted
workspace's notice too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from deepseek_ls.cli.chat.slash import ChatLike, SlashCommand
from deepseek_ls.extensions.commands import CustomCommand, expand, load_commands
from deepseek_ls.extensions.places import untrusted_notice

if TYPE_CHECKING:
    from pathlib import Path

REFRESH = 5.0
WRITE_TOOLS = {"patch.stage", "patch.apply"}


class CustomCommands:
    def __init__(self, root: Path, reserved: Callable[[], Iterable[str]]) -> None:
        self.root = root
        self.reserved = reserved  # () -> the built-in names
        self._specs: dict[str, SlashCommand] = {}
        self._read = float("-inf")
        self._said: set[str] = set()
        self._problems: list[str] = []

    def specs(self) -> dict[str, SlashCommand]:
        """name -> `SlashCommand` for each custom command (read again every `REFRESH` seconds)."""
        if time.monotonic() - self._read > REFRESH:
            self._load()
        return self._specs

    def refresh(self) -> None:
        """Read the files again at the next look (the workspace was just trusted)."""
        self._read = float("-inf")

    def notices(self) -> list[str]:
        """What the person has not been told yet: files left out, the untrusted workspace's notice."""
        self.specs()
        out = [p for p in self._problems if p not in self._said]
        self._said.update(out)
        notice = untrusted_notice(self.root)
        return out + ([notice] if notice else [])

    def _load(self) -> None:
        found = load_commands(self.root, reserved=self.reserved())
        self._problems = found.problems
        self._specs = {c.name: SlashCommand(c.name, c.argument_hint, f"{c.description} ({c.origin})", _handler(c))
                       for c in found.sorted()}
        self._read = time.monotonic()


def _handler(command: CustomCommand):
    async def run(chat: ChatLike, argument: str) -> None:
        out = expand(command, argument, {t.name for t in _tools()})
        for note in out.notes:
            chat.say(note, dim=True)
        mode = chat.mode
        if out.limit is not None and not out.limit.tools & WRITE_TOOLS and mode != "plan":
            mode = "plan"
            chat.say(f"/{command.name} allows no edit tool: it runs in plan mode (nothing is changed)", dim=True)
        await chat.turn(out.prompt, None, mode=mode, profile=out.profile or chat.profile,
                        tool_limit=out.limit.to_json() if out.limit is not None else None)

    return run


def _tools():
    from deepseek_ls.tools.host import ALL_TOOLS, SKILL_LOAD

    return [*ALL_TOOLS, SKILL_LOAD]
