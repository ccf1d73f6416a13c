"""`deepseek.toggleTeammateMode`: the editor's switch for teammate mode (docs/agent.md#teammate-mode).

The switch holds for this editor connection and wins over `agent_loop.teammate_mode`;
`deepseek.runStep` passes it to the agent. The status (`deepseek/status`) says
whether it is on and how many lanes run and wait.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.server import DeepSeekServer


def teammate_mode(ls: DeepSeekServer) -> bool:
    """Whether runStep uses lanes: the editor's switch, else the configuration."""
    override = getattr(ls, "teammate_mode", None)
    if override is not None:
        return bool(override)
    try:
        return bool(ls.config.agent_loop.teammate_mode)
    except Exception:  # noqa: BLE001 - before initialize: off
        return False


def toggle_teammate_mode(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.ToggleArgs, args or {})
    ls.teammate_mode = (not teammate_mode(ls)) if a.enabled is None else a.enabled
    from deepseek_ls.lsp.sessions import status

    ls.notify(names.NOTIFY_STATUS, status(ls))
    state = "on: independent steps run at once in git worktrees" if ls.teammate_mode else "off"
    ls.show_message(f"deepseek-ls: teammate mode {state}.")
    return {"teammate_mode": ls.teammate_mode}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_TOGGLE_TEAMMATE_MODE, toggle_teammate_mode)
