"""`deepseek.toggleTeammateMode`: the editor's switch for teammate mode (docs/agent.md#teammate-mode).

The switch holds for this editor connection (`session_views.SessionViews.teammate_mode`) and wins
over `agent_loop.teammate_mode` (`session_views.teammate_mode`);
`deepseek.runStep` passes it to the agent. The status (`deepseek/status`) says
whether it is on and how many lanes run and wait.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import sessions_of, status, teammate_mode


def toggle_teammate_mode(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.ToggleArgs, args or {})
    sessions = sessions_of(ls)
    sessions.teammate_mode = (not teammate_mode(ls)) if a.enabled is None else a.enabled
    ls.notify(names.NOTIFY_STATUS, status(ls))
    state = "on: independent steps run at once in git worktrees" if sessions.teammate_mode else "off"
    ls.show_message(f"deepseek-ls: teammate mode {state}.")
    return {"teammate_mode": sessions.teammate_mode}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_TOGGLE_TEAMMATE_MODE, toggle_teammate_mode)
