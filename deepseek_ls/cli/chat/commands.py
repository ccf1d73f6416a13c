"""The chat's slash commands: one table of specs (name, arguments, help, handler).

A line starting with `/` is a command and is handled here, in the terminal: it
never reaches the model as a prompt (`/ask`, `/plan` and `/run` take a request
and send *that*, routed as they say). To add a command, `register(SlashCommand(...))`
(slash.py) from your module; a name already taken is refused rather than shadowed. The custom
commands of `extensions/` (per workspace, read from files) come after these through
`chat.commands()` (`custom.py`) and never shadow one. An unknown command says so and
lists the known ones; `//text` sends `/text` as a prompt.

Each handler is `async (chat, argument) -> None` and uses the chat's public
methods (`chat.turn`, `chat.drive`, `chat.say`, `chat.show`); what it cannot do it
says, with what to do instead.
"""

from __future__ import annotations

import asyncio

from rich.table import Table
from rich.text import Text

from deepseek_ls.agent.intent import TurnFlags
from deepseek_ls.cli.chat import modes
from deepseek_ls.cli.chat.render import diff_view
from deepseek_ls.cli.chat.slash import (
    COMMANDS,
    ChatLike,
    SlashCommand,
    dispatch,
    parse,
    register,
)
from deepseek_ls.patch import PatchError
from deepseek_ls.store.ids import is_id

# The table and its parts live one floor down (slash.py); the chat reads them here.
__all__ = ["COMMANDS", "SlashCommand", "dispatch", "parse", "register"]


# -- the handlers ------------------------------------------------------------------------------


async def _help(chat: ChatLike, argument: str) -> None:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    for command in chat.commands().values():
        table.add_row(Text(f"/{command.name} {command.args}".rstrip(), style="bold"), command.help)
    chat.show(table)
    chat.say("Tab cycles the mode (plan → agent → yolo → hetun), Esc cancels a running turn, Alt+Enter (or a "
             "line ending in \\) starts a new line, @path attaches a file, ↑ recalls earlier prompts, "
             "Ctrl-D or /exit leaves.")


async def _ask(chat: ChatLike, argument: str) -> None:
    if not argument:
        chat.say("usage: /ask QUESTION (answered without a plan or any change)")
        return
    await chat.turn(argument, TurnFlags(tools=False))


async def _plan(chat: ChatLike, argument: str) -> None:
    if not argument:
        chat.say("usage: /plan REQUEST (a plan, nothing applied; /run carries it out)")
        return
    await chat.turn(argument, TurnFlags(plan_only=True))


async def _run(chat: ChatLike, argument: str) -> None:
    if not argument:
        await chat.resume(None)
    elif is_id(argument.lower()) or (len(argument) >= 8 and " " not in argument and _known(chat, argument)):
        await chat.resume(argument)
    else:
        await chat.turn(argument, TurnFlags(force_execute=True))


def _known(chat: ChatLike, prefix: str) -> bool:
    try:
        chat.agent.store.resolve(prefix)
    except LookupError:
        return False
    return True


async def _resume(chat: ChatLike, argument: str) -> None:
    await chat.resume(argument or None)


async def _mode(chat: ChatLike, argument: str) -> None:
    if not argument:
        for name in modes.CYCLE:
            mark = "●" if name == chat.mode else " "
            chat.say(f"{mark} {name:6} {modes.MODE_HELP[name]}")
        return
    try:
        chat.mode = modes.set_mode(argument, chat.root).mode
    except ValueError as exc:
        chat.say(f"mode unchanged ({chat.mode}): {exc}")
        return
    chat.say(f"mode: {chat.mode} — {modes.MODE_HELP[chat.mode]}")


async def _model(chat: ChatLike, argument: str) -> None:
    if argument:
        wanted = argument.strip().lower().replace("-", "_")
        if wanted not in modes.PROFILES:
            chat.say(f"unknown profile {argument!r}; choose one of {', '.join(modes.PROFILES)} "
                     "(models are chosen per profile in the config: `deepseek-ls models`)")
            return
        chat.profile = None if wanted == "auto" else wanted
    chat.say(f"model: {chat.model_label()}")


async def _diff(chat: ChatLike, argument: str) -> None:
    store = chat.agent.patches
    try:
        patches = [store.get(argument)] if argument else await asyncio.to_thread(store.pending)
    except PatchError as exc:
        chat.say(str(exc))
        return
    if not patches:
        chat.say("no pending patches")
        return
    for ps in patches:
        pending = len(ps.pending_hunks())
        chat.say(f"patch {ps.patch_id} ({pending}/{len(ps.hunks)} hunks pending): {', '.join(ps.files)}")
        chat.show(diff_view(ps.diff))


async def _apply(chat: ChatLike, argument: str) -> None:
    words = argument.split()
    store = chat.agent.patches

    async def apply() -> None:
        pending = await asyncio.to_thread(store.pending)
        if not words and len(pending) != 1:
            chat.say("no pending patch to apply" if not pending else
                     "several patches are pending: /apply PATCH_ID [HUNK_ID ...] (/diff lists them)")
            return
        patch_id, hunks = (words[0], words[1:] or None) if words else (pending[0].patch_id, None)
        result = await asyncio.to_thread(store.apply, patch_id, hunks)
        chat.say(f"{result.message} — /run continues the session, /undo takes it back" if result.ok
                 else f"not applied: {result.message}")

    await chat.drive(apply())


async def _undo(chat: ChatLike, argument: str) -> None:
    async def undo() -> None:
        plan = await asyncio.to_thread(chat.agent.patches.undo_on_disk)
        if plan is None:
            chat.say("nothing to undo: no apply has been made since the last undo")
            return
        chat.say("restored: " + (", ".join(plan.restored) or "no file"))
        merged = [f.path for f in plan.files if f.merged]
        if merged:
            chat.say("edits made since the apply kept in: " + ", ".join(merged))

    await chat.drive(undo())


async def _cost(chat: ChatLike, argument: str) -> None:
    chat.say(chat.cost_text())


async def _compact(chat: ChatLike, argument: str) -> None:
    from deepseek_ls.agent.context_meter import parts_text

    if not chat.sessions:
        chat.say("nothing to compact: no model call in this chat yet")
        return
    answer = chat.agent.compact(chat.sessions[-1], argument)
    chat.say(answer["message"])
    if answer.get("context"):
        chat.say(f"{answer['context']['text']}: {parts_text(answer['context'])}", dim=True)


async def _sessions(chat: ChatLike, argument: str) -> None:
    listed = chat.agent.sessions()[:15]
    if not listed:
        chat.say("no sessions in this workspace yet")
        return
    table = Table(box=None, padding=(0, 2, 0, 0))
    for column in ("session", "mode", "state", "prompt", "cost"):
        table.add_column(column)
    for s in listed:
        mine = "●" if s.session_id in chat.sessions else ""
        table.add_row(f"{s.session_id[:13]}{mine}", s.mode or "", s.state, (s.prompt or "")[:60].replace("\n", " "),
                      (s.cost or {}).get("short", ""))
    chat.show(table)
    chat.say("/resume ID continues one (● this chat's)")


async def _trust(chat: ChatLike, argument: str) -> None:
    from deepseek_ls.trust import workspace_trust

    if argument.lower() in ("yes", "on", "trust"):
        chat.trust_workspace()
    state = workspace_trust(chat.root)
    if state.trusted:
        chat.say(f"{chat.root}: trusted (its .deepseek/config.toml as it is now); yolo mode is available")
    else:
        why = "changed since you trusted it" if state.reason == "changed" else "not trusted"
        chat.say(f"{chat.root}: {why}. Settings in its .deepseek/config.toml that loosen policy are ignored and "
                 "yolo mode is refused. `/trust yes` trusts it (as `deepseek-ls trust` does).")


async def _reasoning(chat: ChatLike, argument: str) -> None:
    text = chat.ui.last_reasoning.strip()
    chat.show(Text(text, style="dim italic") if text else Text("the last answer came without reasoning"))


async def _exit(chat: ChatLike, argument: str) -> None:
    chat.leaving = True


for _spec in (
    SlashCommand("help", "", "this list", _help),
    SlashCommand("ask", "QUESTION", "answer it, no plan and no change (--tools=false for one prompt)", _ask),
    SlashCommand("plan", "REQUEST", "plan it, apply nothing (--plan-only for one prompt)", _plan),
    SlashCommand("run", "[REQUEST|ID]", "plan and carry out REQUEST (--force-execute); alone: continue the "
                 "last session of this chat; ID: continue that session", _run),
    SlashCommand("mode", "[plan|agent|yolo|hetun]", "show or set the mode (Tab cycles it)", _mode),
    SlashCommand("model", "[auto|fast|max_think]", "show or force the model profile", _model),
    SlashCommand("diff", "[PATCH_ID]", "the pending patches as diffs", _diff),
    SlashCommand("apply", "[PATCH_ID [HUNK_ID ...]]", "apply a staged patch (the pending one when alone)", _apply),
    SlashCommand("undo", "", "take the last apply back out (edits made since are kept)", _undo),
    SlashCommand("cost", "", "tokens and money of this chat's sessions", _cost),
    SlashCommand("compact", "[FOCUS]", "summarize the older turns of the running conversation, keeping FOCUS; "
                 "shows how full the context is", _compact),
    SlashCommand("sessions", "", "this workspace's sessions, newest first", _sessions),
    SlashCommand("resume", "[ID]", "continue a paused session where it stopped", _resume),
    SlashCommand("trust", "[yes]", "whether this workspace is trusted (yolo needs it); yes trusts it", _trust),
    SlashCommand("reasoning", "", "the last answer's reasoning, whole", _reasoning),
    SlashCommand("exit", "", "leave (Ctrl-D too)", _exit),
    SlashCommand("quit", "", "the same as /exit", _exit),
):
    register(_spec)

from deepseek_ls.cli.chat import rewind_cmd  # noqa: E402,F401 - registers /rewind (uses this table)
