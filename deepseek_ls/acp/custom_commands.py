"""Custom commands under ACP: offered in `available_commands_update` beside ours, run as `/name args`.

The workspace's and the user's custom commands (`extensions/commands.py`; a repository's only once
the workspace is trusted) are announced with their description and argument hint, so an ACP client
(Zed, acpx) offers them in its `/` menu. A prompt `/name arguments` naming one is expanded here and
sent to the agent as a turn (`Agent.turn`, routed by intent) whose tools its allowed-tools narrow;
the slash line itself never reaches the model. Our own commands (/plan, /ask, /run, /undo,
/review) are never shadowed.
"""

from __future__ import annotations

from pathlib import Path

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from deepseek_ls.extensions.commands import Expansion, expand, load_commands

WRITE_TOOLS = {"patch.stage", "patch.apply"}


def available(root: Path, builtin: list[AvailableCommand]) -> tuple[list[AvailableCommand], list[str]]:
    """Our commands then the custom ones, and the files left out (said to the person)."""
    found = load_commands(root, reserved=[c.name for c in builtin])
    custom = [
        AvailableCommand(name=c.name, description=f"{c.description} ({c.origin})",
                         input=AvailableCommandInput(root=UnstructuredCommandInput(hint=c.argument_hint))
                         if c.argument_hint else None)
        for c in found.sorted()
    ]
    return [*builtin, *custom], found.problems


def expansion(root: Path, text: str, builtin: list[AvailableCommand]) -> Expansion | None:
    """The expanded prompt when `text` is `/name arguments` naming a custom command, else None."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, arguments = stripped[1:].partition(" ")
    command = load_commands(root, reserved=[c.name for c in builtin]).get(name.lower())
    if command is None:
        return None
    from deepseek_ls.tools.host import ALL_TOOLS, SKILL_LOAD

    return expand(command, arguments, {t.name for t in (*ALL_TOOLS, SKILL_LOAD)})


def turn_mode(exp: Expansion, mode: str) -> str:
    """The session mode the command runs in: plan when it allows no edit tool, else the client's."""
    if exp.limit is not None and not exp.limit.tools & WRITE_TOOLS:
        return "plan"
    return mode if mode in ("plan", "agent", "yolo") else "agent"
