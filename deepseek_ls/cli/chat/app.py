"""The chat's loop: read a message, run a slash command or a turn, show what happened.

A turn is `Agent.turn` — the agent decides whether the message is a question (it
is answered) or a change request (planned first, then carried out), the chat
only says which mode and model to use and what the person forced (`TurnFlags`).
The turn runs as a task; on a terminal Esc or Ctrl-C cancels it (`keys.py`): the
session pauses as Ctrl-C pauses `deepseek-ls run`, a patch being applied lands
whole first, and `/run` continues it. Errors are said in one line and the chat
goes on. The last two exchanges go with the next message as context, so "fix it"
after a question knows what "it" is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections import deque
from collections.abc import Awaitable
from typing import Any, TypeVar

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from deepseek_ls.agent.intent import TurnFlags
from deepseek_ls.agent.runtime import AgentFailure, SessionCancelled
from deepseek_ls.cli.chat import commands, modes
from deepseek_ls.cli.chat.custom import CustomCommands
from deepseek_ls.cli.chat.render import ChatUI, plan_table
from deepseek_ls.cli.common import CliContext
from deepseek_ls.patch import PatchError
from deepseek_ls.trust import UntrustedWorkspace

T = TypeVar("T")
log = logging.getLogger("deepseek_ls.cli")
EARLIER_TURNS = 2  # exchanges sent along with the next message
EARLIER_CHARS = 1500  # of each earlier answer


class Chat:
    def __init__(self, ctx: CliContext, *, mode: str, profile: str | None, flags: TurnFlags,
                 show_reasoning: bool = False, tty: bool | None = None) -> None:
        self.ctx = ctx
        self.root = ctx.root
        self.mode = mode
        self.profile = profile  # None: the router picks fast or max-think per call
        self.flags = flags
        self.tty = (sys.stdin.isatty() and sys.stdout.isatty()) if tty is None else tty
        # Off a terminal, lines are not wrapped: a script reads them whole.
        self.console = Console(highlight=False, force_terminal=self.tty or None, soft_wrap=not self.tty)
        self.input = self._input() if self.tty else None
        self.ui = ChatUI(self.console, reader=self.input.answer if self.input else None, show_reasoning=show_reasoning)
        self.agent: Any = None
        self.sessions: list[str] = []  # this chat's sessions, oldest first
        self.current: str | None = None  # the session of the running turn
        self.earlier: deque[tuple[str, str]] = deque(maxlen=EARLIER_TURNS)
        self.leaving = False
        self._plans: dict[str, tuple[str, int]] = {}  # session -> (plan_id, version) last shown
        self.custom = CustomCommands(self.root, lambda: commands.COMMANDS)
        self.rewound: dict[str, list[str]] = {}  # rewind id -> the prompts it took out of this chat (/rewind)

    def commands(self) -> dict[str, commands.SlashCommand]:
        """The built-in slash commands, then the custom ones (`custom.py`)."""
        return {**commands.COMMANDS, **self.custom.specs()}

    def _input(self):
        from deepseek_ls.cli.chat.completion import ChatCompleter, WorkspaceFiles
        from deepseek_ls.cli.chat.prompt import ChatInput

        files = WorkspaceFiles(self.root, self.ctx.config.policy.deny_paths)
        completer = ChatCompleter(self.commands, files.get)
        return ChatInput(self.ctx.state_dir, completer, label=self.prompt_label, cycle=self.cycle_mode)

    # -- the loop ---------------------------------------------------------------------------

    async def run(self, agent: Any, resume: str | None = None) -> None:
        self.agent = agent
        remove = agent.on_state_change(self._on_change)
        try:
            self.say(f"deepseek-ls chat in {self.root} — mode {self.mode}, model {self.model_label()}; /help lists "
                     "the commands")
            for notice in self.custom.notices():
                self.say(notice, dim=True)
            if resume:
                await self.resume(resume)
            while not self.leaving:
                text = await self.read()
                if text is None:
                    return
                await self.handle(text)
        finally:
            remove()

    async def read(self) -> str | None:
        if self.input is not None:
            return await self.input.read()
        sys.stderr.write(f"\n{self.mode}> ")
        sys.stderr.flush()
        return await self.ui.readline()

    async def handle(self, text: str) -> None:
        if not text.strip():
            return
        command = commands.parse(text)
        if command is not None:
            await commands.dispatch(self, *command)
            return
        message = text.strip()
        await self.turn(message[1:] if message.startswith("//") else message)

    # -- turns ------------------------------------------------------------------------------

    async def turn(self, text: str, flags: TurnFlags | None = None, *, mode: str | None = None,
                   profile: str | None = None, tool_limit: dict[str, Any] | None = None) -> None:
        """Send `text` to the agent, routed by its intent unless `flags` (or the chat's) force a route.
        `mode`, `profile`: this turn's instead of the chat's; `tool_limit`: a custom command's tools."""
        flags = flags or self.flags
        extra = {"tool_limit": tool_limit} if tool_limit is not None else {}
        out = await self.drive(self.agent.turn(text, self._context(), mode=mode or self.mode, flags=flags,
                                               profile=profile or self.profile, on_session=self._started, **extra))
        if out is None:
            return
        if out.get("answer") is not None:
            answer = out["answer"]
            if not self.ui.answered and answer.get("content"):
                self.show(Markdown(answer["content"]))  # not streamed (llm.stream = false)
            self.say(f"{answer.get('model', '')} · {answer['cost']['session']['short']}", dim=True)
            self.earlier.append((text, answer.get("content") or ""))
            return
        self._summary(out["view"])
        self.earlier.append((text, _outcome(out["view"])))

    async def resume(self, session_id: str | None) -> None:
        """Continue a session where it stopped (the last of this chat when None)."""
        target = session_id or (self.sessions[-1] if self.sessions else None)
        if target is None:
            self.say("nothing to continue in this chat: /run REQUEST starts one, /sessions lists earlier ones")
            return
        view = await self.drive(self.agent.run(session_id=target, profile=self.profile))
        if view is not None:
            self._started(view["session_id"])
            self._summary(view)

    async def drive(self, work: Awaitable[T]) -> T | None:
        """Run `work` as the turn's task: Esc / Ctrl-C (on a terminal) cancels it; an error is said
        in one line. Returns its result, or None when it was cancelled or failed."""
        from deepseek_ls.cli.chat.keys import cancel_on_escape

        task = asyncio.ensure_future(work)
        by_key = False

        def cancel() -> None:
            nonlocal by_key
            by_key = True
            task.cancel()

        watching = cancel_on_escape(self.input.source, cancel) if self.input else contextlib.nullcontext()
        try:
            with watching:
                return await task
        except asyncio.CancelledError:
            if not by_key:
                raise
            self.ui.pause()
            self.say(self._cancelled())
        except Exception as exc:
            self.ui.pause()
            if not isinstance(exc, EXPECTED) and getattr(exc, "user_message", None) is None:
                log.error("the chat's %s failed unexpectedly", type(exc).__name__, exc_info=exc)
            self.say(f"deepseek-ls: {_message(exc)}", style="red")
        finally:
            self.ui.pause()
            self.current = None
        return None

    def _cancelled(self) -> str:
        sid = self.current
        if sid is None:
            return "cancelled"
        state = self.agent.session_view(sid)["state"]
        if state == "Paused":
            return f"cancelled: session {sid[:13]} is paused — /run continues it"
        return f"cancelled ({state.lower()})"

    def _started(self, session_id: str) -> None:
        self.current = session_id
        if session_id not in self.sessions:
            self.sessions.append(session_id)

    def set_conversation(self, sessions: list[str]) -> None:
        """This chat's prompts after a rewind or its redo (cli/chat/rewind_cmd.py): what goes with the
        next message is rebuilt from the last of them, so a prompt taken back is not sent again."""
        self.sessions = list(sessions)
        self.earlier.clear()
        for sid in self.sessions[-EARLIER_TURNS:]:
            view = self.agent.session_view(sid)
            answers = [t["content"] for t in self.agent.transcript(sid) if t["role"] == "assistant" and t["content"]]
            said = answers[-1] if view.get("intent", {}).get("intent") == "question" and answers else _outcome(view)
            self.earlier.append((view.get("prompt") or "", said))

    def _context(self) -> str | None:
        if not self.earlier:
            return None
        parts = [f"The person asked: {asked}\nOutcome: {said[:EARLIER_CHARS]}" for asked, said in self.earlier]
        return "Earlier in this chat:\n\n" + "\n\n".join(parts)

    # -- what is shown ----------------------------------------------------------------------

    def _on_change(self, change: Any) -> None:
        if change.session_id != self.current:
            return
        plan = self.agent.session_view(change.session_id).get("plan")
        if plan and self._plans.get(change.session_id) != (plan["plan_id"], plan["version"]):
            self._plans[change.session_id] = (plan["plan_id"], plan["version"])
            self.show(plan_table(plan))

    def _summary(self, view: dict[str, Any]) -> None:
        for p in view["patches"]:
            status = "applied" if p["applied"] else "rejected" if p["rejected"] else "pending"
            self.say(f"  patch {p['patch_id']} ({status}): {', '.join(p['files'])}")
        line = f"session {view['session_id'][:13]}: {view['state']}"
        why = view.get("last_error") if view["state"] == "Failed" else view.get("state_reason")
        if view["state"] in ("Failed", "Paused") and why:
            line += f" — {why}"
        self.say(line, style="bold")
        if view["state"] == "Paused":
            self.say("/run continues it, /diff shows what is staged", dim=True)
        cost = (view.get("cost") or {}).get("session") or {}
        if cost.get("calls"):
            self.say(f"cost: {cost['short']} in {cost['calls']} model call(s)", dim=True)

    def say(self, text: str, *, dim: bool = False, style: str | None = None) -> None:
        self.show(Text(text, style=style or ("dim" if dim else "")))

    def show(self, *renderables: Any) -> None:
        self.ui.show(*renderables)

    # -- mode, model, cost, trust -----------------------------------------------------------

    def cycle_mode(self, backwards: bool = False) -> str | None:
        change = modes.next_mode(self.mode, self.root, backwards=backwards)
        self.mode = change.mode
        return change.note

    def model_label(self) -> str:
        profiles = self.ctx.config.llm.profiles
        if self.profile is None:
            return f"auto ({profiles['fast'].model} / {profiles['max_think'].model})"
        return f"{self.profile} ({profiles[self.profile].model})"

    def prompt_label(self) -> list[tuple[str, str]]:
        profiles = self.ctx.config.llm.profiles
        model = profiles[self.profile or "fast"].model + ("" if self.profile else " (auto)")
        meter = self.meter_text()
        return [(f"class:mode.{self.mode}", f" {self.mode} "), ("", " "), ("class:model", model),
                *([("", " "), ("class:meter", meter)] if meter else []), ("", " › ")]

    def meter_text(self) -> str:
        """The context meter of this chat's latest session ("ctx 12k/128k (9%)"), "" before any call."""
        from deepseek_ls.agent.context_meter import meter_text

        if not self.sessions or self.agent is None:
            return ""
        return meter_text(self.agent.session_view(self.sessions[-1]).get("context"))

    def cost_text(self) -> str:
        from deepseek_ls.llm.budget import ledger_from_events

        if not self.sessions:
            return "no model call in this chat yet"
        events = [(e.kind, e.payload) for sid in self.sessions for e in self.agent.store.open(sid).read()]
        spend = ledger_from_events(events, self.agent.prices).total()
        return f"this chat: {spend.text()} in {spend.calls} model call(s), {len(self.sessions)} session(s)"

    def trust_workspace(self) -> None:
        from deepseek_ls.config import user_config_path
        from deepseek_ls.trust import TrustStore, trust_file

        TrustStore(trust_file(user_config_path())).trust(self.root)
        self.custom.refresh()  # the workspace's own commands may be used now


# What a turn or a command may end with that the person can act on: said in one line, no traceback.
EXPECTED = (AgentFailure, SessionCancelled, PatchError, LookupError, UntrustedWorkspace, ValueError)


def _outcome(view: dict[str, Any]) -> str:
    plan = view.get("plan") or {}
    return f"{plan.get('goal', 'a change')}: session {view['state']} {view.get('state_reason') or ''}".strip()


def _message(exc: BaseException) -> str:
    return getattr(exc, "user_message", None) or str(exc) or type(exc).__name__
