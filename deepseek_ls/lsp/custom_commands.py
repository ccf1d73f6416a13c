"""Custom commands and skills over LSP: `deepseek.listCommands` and `deepseek.runCommand`.

`deepseek.listCommands` answers the custom commands (`extensions/commands.py`) and the Agent
Skills of the workspace and the user, with the files left out and why, and the untrusted
workspace's notice; an editor fills its command list and completion from it (VS Code's quick
pick, Neovim's `:DeepSeekCommand`). `deepseek.runCommand {name, arguments}` expands one and sends
the prompt to the agent as a turn (`Agent.turn`, routed by intent), narrowed by its allowed-tools;
the document or selection it was started from goes along as context, as for `deepseek.ask`.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.commands import editor_context
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, driving, refresh_session

WRITE_TOOLS = {"patch.stage", "patch.apply"}


def _root(ls: DeepSeekServer):
    if ls.root is None:
        raise ValueError("no workspace folder is open: custom commands are read from a workspace")
    return ls.root


def _tell_untrusted(ls: DeepSeekServer) -> str | None:
    from deepseek_ls.extensions.places import untrusted_notice

    notice = untrusted_notice(_root(ls))
    if notice:
        ls.show_message(f"deepseek-ls: {notice}")
    return notice


# The extensions load on first use (the server answers `initialize` before the core is imported).
async def list_commands(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.extensions.commands import load_commands
    from deepseek_ls.extensions.skills import load_skills

    root = _root(ls)
    found, skills = load_commands(root), load_skills(root)
    return {
        "commands": [c.to_json() for c in found.sorted()],
        "skills": [s.to_json() for s in skills.sorted()],
        "problems": found.problems + skills.problems,
        "notice": _tell_untrusted(ls),
    }


async def run_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    from deepseek_ls.extensions.commands import expand, load_commands

    a = params.parse_args(params.RunCommandArgs, args)
    root = _root(ls)
    _tell_untrusted(ls)
    name = a.name.strip().removeprefix("/").lower()
    command = load_commands(root).get(name)
    if command is None:
        raise LookupError(f"no custom command /{name} here (a workspace's own are used only once it is trusted); "
                          "deepseek.listCommands lists them")
    from deepseek_ls.tools.host import ALL_TOOLS, SKILL_LOAD

    out = expand(command, a.arguments, {t.name for t in (*ALL_TOOLS, SKILL_LOAD)})
    for note in out.notes:
        ls.show_message(f"deepseek-ls: {note}")
    mode = ls.config.agent_loop.mode
    if out.limit is not None and not out.limit.tools & WRITE_TOOLS:
        mode = "plan"  # no edit tool allowed: it can answer or plan, never change a file
    limit = out.limit.to_json() if out.limit is not None else None
    async with driving(ls, f"DeepSeek: /{command.name}", None) as drive:
        result = await agent(ls).turn(out.prompt, editor_context(ls, a), mode=mode, profile=out.profile,
                                      on_session=lambda sid: drive.attach(sid, make_active=True), tool_limit=limit)
    refresh_session(ls, result["session_id"])
    view = result.pop("view", {}) or {}
    return {**result, "command": command.name, "mode": mode, "notes": out.notes, "state": view.get("state")}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_LIST_COMMANDS, list_commands)
    command(server, names.CMD_RUN_COMMAND, run_command)
