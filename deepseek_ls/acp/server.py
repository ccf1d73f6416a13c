"""`deepseek-ls acp`: the agent over the Agent Client Protocol (v1, JSON-RPC on stdio).

A thin adapter, like `lsp/`: it translates ACP methods into calls on the core's
`Agent` and the core's output into `session/update`s; it holds no agent logic.

One ACP session is a conversation: each prompt runs in our agent (according to the
mode: `ask` answers, `plan` plans, `agent` plans, applies after permission and
verifies, `yolo` does the same without asking) and becomes one of our sessions,
with its own event log; the ACP session remembers which (`.deepseek/acp/`), so
`session/load` replays them and `deepseek-ls replay` re-runs any of them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    UsageUpdate,
)

from deepseek_ls import __version__
from deepseek_ls.acp import custom_commands, errors, options
from deepseek_ls.acp.client_files import ClientFiles
from deepseek_ls.acp.options import MODES
from deepseek_ls.acp.sessions import AcpSessionRecord, AcpSessionStore
from deepseek_ls.acp.ui import AcpUI
from deepseek_ls.acp.updates import patch_outcome, plan_update, replay_updates
from deepseek_ls.policy.approvals import Refused
from deepseek_ls.policy.paths import secret_location
from deepseek_ls.policy.secret_files import secret_kind
from deepseek_ls.workspace import find_workspace_root

log = logging.getLogger(__name__)

RESUME_WORDS = {"run", "continue", "resume", "go on"}
COMMANDS = [
    AvailableCommand(name="plan", description="make a plan without changing anything"),
    AvailableCommand(name="ask", description="ask a question about the code"),
    AvailableCommand(name="run", description="plan, apply and verify (the agent mode)"),
    AvailableCommand(name="undo", description="undo the latest applied change (what you typed since stays)"),
    AvailableCommand(name="compact", description="summarize the older turns of the running conversation [focus]"),
    AvailableCommand(name="rewind", description="back to before a prompt: [N] [code|conversation|both]; alone: "
                     "list; 'redo' undoes a rewind"),
    AvailableCommand(name="review", description="review the changes, read-only: [--staged | --base REF] [path...]"),
]


class AcpSession:
    """A live ACP session: its record, its agent (one per ACP session), its UI, the client's files
    (None: the disk) and the running turn."""

    def __init__(self, record: AcpSessionRecord, agent: Any, ui: AcpUI, files: ClientFiles | None) -> None:
        self.record = record
        self.agent = agent
        self.ui = ui
        self.files = files
        self.turn: asyncio.Task[Any] | None = None
        self.current: str | None = None  # our session id of the running turn

    def refused(self, error: Any) -> None:
        """A read the client refused stops the turn: it cannot see what the person sees."""
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()


class DeepSeekAcpAgent:
    """`root` and `loaded`: the workspace and config `deepseek-ls acp` started with; `config_path` and
    `profile` (its `--config`, `--profile`) apply to every session, whatever its workspace."""

    def __init__(self, root: Path, loaded: Any, *, config_path: Path | None = None, profile: str | None = None) -> None:
        self.root = Path(root).resolve()
        self.loaded = loaded
        self.config_path = config_path
        self.profile = profile
        self.conn: Any = None
        self.client_capabilities: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self._configs: dict[Path, Any] = {self.root: loaded}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- lifecycle -----------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="deepseek-ls", title="DeepSeek (deepseek-ls)", version=__version__),
            auth_methods=errors.auth_methods(self.loaded.config),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """The key comes from the environment, as for the CLI: nothing to do when it is there."""
        problem = errors.auth_problem(self.loaded.config)
        if problem:
            raise errors.auth_required(problem)

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        root = self._workspace(cwd)
        loaded = self.config_for(root)
        problem = errors.auth_problem(loaded.config)
        if problem:  # before a session exists: the client asks the person for the key (authMethods)
            raise errors.auth_required(problem)
        record = AcpSessionStore(root).create(root, mode=self._default_mode())
        session = self._open(record, mcp_servers or [])
        self._announce(session)
        return NewSessionResponse(session_id=record.session_id, modes=options.mode_state(record.mode),
                                  config_options=options.config_options(record, session.agent.config))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        root = self._workspace(cwd)
        record = AcpSessionStore(root).get(session_id)
        if record is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "no such session in this workspace"})
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await _close(old)
        session = self._open(record, mcp_servers or [])
        for sid in record.ours:
            try:
                events = session.agent.store.open(sid).read()
            except Exception as exc:  # noqa: BLE001 - a missing log is reported, the rest still loads
                session.ui.send(update_agent_message_text(f"[session {sid} could not be read: {exc}]\n"))
                continue
            for update in replay_updates(events, lambda p: self._staged_diffs(session, p)):
                session.ui.send(update)
        await session.ui.flush()
        self._announce(session)
        return LoadSessionResponse(modes=options.mode_state(record.mode),
                                   config_options=options.config_options(record, session.agent.config))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> ListSessionsResponse:
        root = self._workspace(cwd) if cwd else self.root
        records = AcpSessionStore(root).list()
        return ListSessionsResponse(sessions=[
            SessionInfo(session_id=r.session_id, cwd=str(root), title=r.title or None, updated_at=r.updated)
            for r in records
        ])

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        await self.set_config_option("mode", session_id, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """Mode, model profile or approval of the session (`options.py`); a bad value: `-32602`."""
        session = self._session(session_id)
        record, config = session.record, session.agent.config
        options.choose(record, config, Path(record.cwd), config_id, value)
        AcpSessionStore(Path(record.cwd)).save(record)
        current = options.config_options(record, config)
        if config_id == "mode":
            session.ui.send(options.mode_update(record.mode))
        session.ui.send(ConfigOptionUpdate(session_update="config_option_update", config_options=current))
        return SetSessionConfigOptionResponse(config_options=current)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None or session.turn.done():
            return
        # Cancelling the turn's task stops the agent where it is; the session settles as Paused
        # inside the request that was running (agent.cancel would record a request of its own).
        session.turn.cancel()

    # -- prompts ---------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.turn is not None and not session.turn.done():
            raise RequestError.invalid_request({"reason": "a prompt is already running in this session"})
        text, context, left_out = _prompt_text(prompt, session.agent.config.policy.deny_paths)
        if left_out:
            session.ui.send(update_agent_message_text(
                f"[left out of the prompt: {', '.join(left_out)} — secret files never reach the model]\n"))
        if not text.strip():
            raise RequestError.invalid_params({"reason": "the prompt has no text"})
        mode, text = _command(text, session.record.mode)
        expanded = custom_commands.expansion(Path(session.record.cwd), text, COMMANDS)
        if not session.record.title:
            session.record.title = (text.strip() or f"/{mode}").splitlines()[0][:80]
        if session.files is not None:
            session.files.refusals.clear()
        session.turn = asyncio.current_task()
        failure: RequestError | None = None
        ours = None
        session.ui.client_cancelled = False
        try:
            if expanded is not None:
                await self._custom_turn(session, expanded, context)
            else:
                await self._run_turn(session, mode, text, context)
            # A permission answered `cancelled` means the person cancelled the turn (the client's
            # session/cancel may still be on its way): the session paused, the change kept staged.
            stop = "cancelled" if session.ui.client_cancelled else "end_turn"
        except asyncio.CancelledError:
            stop = "cancelled"
        except Refused as exc:  # a question cancelled or left unanswered: the session paused, no failure
            session.ui.send(update_agent_message_text(f"\n[Paused] {exc}\n"))
            stop = "cancelled" if session.ui.client_cancelled else "end_turn"
        except Exception as exc:  # noqa: BLE001 - answered as a JSON-RPC error the client can act on
            log.info("ACP turn failed: %s", exc, exc_info=not hasattr(exc, "user_message"))
            failure = errors.turn_error(exc, session.current)
        finally:
            ours = session.current
            session.turn = None
            session.current = None
            AcpSessionStore(Path(session.record.cwd)).save(session.record)
        if session.files is not None and session.files.refusals:
            failure = errors.refused_reads(session.files.refusals, ours)
        try:
            await asyncio.wait_for(session.ui.flush(), 10)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass
        if failure is not None:
            raise failure
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def _run_turn(self, session: AcpSession, mode: str, text: str, context: str | None) -> None:
        agent, ui = session.agent, session.ui
        ui.content_is_answer = mode == "ask"
        profile = session.record.profile
        if mode == "undo":
            from deepseek_ls.acp.client_apply import undo_latest

            ui.send(update_agent_message_text(await asyncio.to_thread(undo_latest, agent, session.files) + "\n"))
            return
        if mode == "compact":
            if not session.record.ours:
                ui.send(update_agent_message_text("Nothing to compact: no model call in this session yet.\n"))
                return
            answer = agent.compact(session.record.ours[-1], text if text.strip() != "/compact" else "")
            meter = answer.get("context") or {}
            ui.send(update_agent_message_text(f"{answer['message']}" + (f" ({meter['text']})" if meter else "") + "\n"))
            self._usage(session, meter, {})
            return
        if mode == "rewind":
            from deepseek_ls.acp.rewind import rewind_turn

            ui.send(update_agent_message_text(await rewind_turn(agent, ui, session.record, text) + "\n"))
            return
        if mode == "review":
            from deepseek_ls.acp.review import review_turn

            def on_session(sid: str) -> None:
                session.current = sid
                self._adopt(session, sid)

            await review_turn(agent, ui, text, profile, on_session)
            return
        if mode == "agent" and text.strip().lower() in RESUME_WORDS and session.record.ours:
            view = await self._tracked(session, agent.run(session_id=session.record.ours[-1], profile=profile))
            self._final(session, view)
            return
        if mode == "ask":
            result = await agent.ask(text, context, profile=profile)
            self._adopt(session, result.get("session_id"))
            if not result.get("streamed") and result.get("content"):
                ui.send(update_agent_message_text(result["content"]))
            return
        if mode == "plan":
            sid, plan = await self._tracked(session, agent.plan(text, context, mode="plan", profile=profile))
            self._adopt(session, sid)
            update = plan_update(agent.session_view(sid).get("plan"))
            if update is not None:
                ui.send(update)
            ui.send(update_agent_message_text(f"\nPlan ready ({len(plan.steps)} steps). Switch to agent mode and "
                                              "say 'run' to carry it out.\n"))
            return
        view = await self._tracked(session, agent.run(text, mode=mode, profile=profile))
        self._adopt(session, view["session_id"])
        self._final(session, view)

    async def _custom_turn(self, session: AcpSession, exp: Any, context: str | None) -> None:
        """A custom command: its prompt as a turn (answered, or planned and carried out), narrowed."""
        ui = session.ui
        for note in exp.notes:
            ui.send(update_agent_message_text(f"[{note}]\n"))
        ui.content_is_answer = False  # a plan's JSON or an answer: the answer is sent whole below
        limit = exp.limit.to_json() if exp.limit is not None else None
        out = await self._tracked(session, session.agent.turn(
            exp.prompt, context, mode=custom_commands.turn_mode(exp, session.record.mode),
            profile=exp.profile or session.record.profile, tool_limit=limit,
            on_session=lambda sid: self._adopt(session, sid)))
        if out.get("answer") is not None:
            ui.send(update_agent_message_text(out["answer"].get("content") or ""))
        else:
            self._final(session, out["view"])

    async def _tracked(self, session: AcpSession, work: Any) -> Any:
        """Run `work` while pushing the plan and patches to the client on every state change."""
        agent = session.agent
        seen: dict[str, Any] = {"plan": None, "patches": {}}

        def on_change(change: Any) -> None:
            sid = change.session_id
            session.current = sid
            self._adopt(session, sid)
            try:
                view = agent.session_view(sid)
            except Exception:  # noqa: BLE001
                return
            self._push_view(session, view, seen)

        remove = agent.on_state_change(on_change) if hasattr(agent, "on_state_change") else (lambda: None)
        try:
            return await work
        finally:
            remove()

    def _usage(self, session: AcpSession, meter: dict[str, Any] | None, seen: dict[str, Any]) -> None:
        """The context meter as ACP's `usage_update` (tokens in context out of the window), when it changed."""
        if not meter or not meter.get("window"):
            return
        key = (meter["used"], meter["window"])
        if seen.get("usage") != key:
            seen["usage"] = key
            session.ui.send(UsageUpdate(used=meter["used"], size=meter["window"], session_update="usage_update"))

    def _push_view(self, session: AcpSession, view: dict[str, Any], seen: dict[str, Any]) -> None:
        self._usage(session, view.get("context"), seen)
        plan = view.get("plan")
        state, reason = view.get("state"), view.get("state_reason") or ""
        key = json.dumps([plan, state, reason], sort_keys=True, default=str) if plan else None
        if key != seen["plan"]:
            seen["plan"] = key
            update = plan_update(plan, state, reason)
            if update is not None:
                session.ui.send(update)
        for rec in view.get("patches", []):
            pid = rec["patch_id"]
            state = "applied" if rec.get("applied") else "rejected" if rec.get("rejected") else None
            if state and seen["patches"].get(pid) != state and pid in session.ui.shown_patches:
                seen["patches"][pid] = state
                session.ui.send(patch_outcome(pid, state == "applied", f"{state}: {', '.join(rec.get('files', []))}"))

    def _final(self, session: AcpSession, view: dict[str, Any]) -> None:
        self._push_view(session, view, {"plan": None, "patches": {}})
        state = view.get("state")
        steps = (view.get("plan") or {}).get("steps", [])
        done = sum(1 for s in steps if s.get("status") == "done")
        if state == "Completed":
            message = f"\nDone: {done}/{len(steps)} step(s) applied and verified.\n"
        else:
            why = view.get("state_reason") or view.get("last_error") or "waiting"
            message = (f"\n[{state}] {why}. The session is kept: send 'run' to resume, "
                       f"or see it with `deepseek-ls replay {view.get('session_id')}`.\n")
        session.ui.send(update_agent_message_text(message))

    # -- helpers ---------------------------------------------------------------------------

    def _workspace(self, cwd: str | None) -> Path:
        """The workspace of a session opened in `cwd`: the repository holding it (as for the CLI), else
        the workspace `deepseek-ls acp` started in when `cwd` lies in it, else `cwd` itself."""
        if not cwd:
            raise RequestError.invalid_params({"reason": "cwd is required"})
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise RequestError.invalid_params({"cwd": str(cwd)[:300], "reason": "not an absolute path to a directory"})
        path = path.resolve()
        repository = find_workspace_root(path)
        if repository != path or (path / ".git").exists():
            return repository
        if path.is_relative_to(self.root) and (self.root / ".deepseek").is_dir():
            return self.root
        return path

    def config_for(self, root: Path) -> Any:
        """The config of sessions in `root`: its own workspace file, with `--config` and `--profile`."""
        if root not in self._configs:
            from deepseek_ls.config import ConfigError, load_config

            try:
                self._configs[root] = load_config(root, config_path=self.config_path, profile=self.profile)
            except ConfigError as exc:
                raise RequestError.invalid_params({"cwd": str(root), "reason": str(exc)[:1000]}) from exc
        return self._configs[root]

    def _default_mode(self) -> str:
        mode = self.loaded.config.agent_loop.mode
        return mode if mode in MODES and mode not in ("yolo", "hetun") else "agent"  # never start in yolo or hetun

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": str(session_id)[:100], "reason": "unknown session; "
                                               "create it with session/new or load it with session/load"})
        return session

    def _open(self, record: AcpSessionRecord, mcp_servers: list[Any]) -> AcpSession:
        from deepseek_ls.acp.wiring import client_files, session_agent

        root = Path(record.cwd)
        holder: dict[str, Any] = {}
        ui = AcpUI(self.conn, record.session_id, diffs=lambda pid: self._diffs(holder["agent"], root, pid), root=root)
        files = client_files(self.conn, record.session_id, root, self.client_capabilities)
        agent = session_agent(root, self.config_for(root), ui, mcp_servers, files=files)
        options.restore(record, agent.config, root)
        holder["agent"] = agent
        session = AcpSession(record, agent, ui, files)
        if files is not None:
            files.on_refused = session.refused
        ui.on_session = lambda sid: self._running(session, sid)
        self.sessions[record.session_id] = session
        return session

    def _running(self, session: AcpSession, sid: str) -> None:
        if session.turn is not None and session.current != sid:
            session.current = sid
            self._adopt(session, sid)

    def _announce(self, session: AcpSession) -> None:
        from deepseek_ls.extensions.places import untrusted_notice

        root = Path(session.record.cwd)
        offered, problems = custom_commands.available(root, COMMANDS)
        session.ui.send(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=offered))
        for said in [*problems, untrusted_notice(root)]:
            if said:
                session.ui.send(update_agent_message_text(f"[{said}]\n"))

    def _adopt(self, session: AcpSession, sid: str | None) -> None:
        if sid and sid not in session.record.ours:
            session.record.ours.append(sid)
            session.record.updated = _now()
            AcpSessionStore(Path(session.record.cwd)).save(session.record)

    @staticmethod
    def _diffs(agent: Any, root: Path, patch_id: str) -> list[tuple[str, str | None, str]]:
        from deepseek_ls.patch.hunks import apply_hunks

        ps = agent.patches.get(patch_id)
        out = []
        for file in ps.files:
            change = ps.changes.get(file)
            old = change.base_text if change is not None else None
            new = apply_hunks(old or "", ps.hunks_of(file))
            out.append((str(root / file), old, new))
        return out

    def _staged_diffs(self, session: AcpSession, payload: dict[str, Any]) -> list[tuple[str, str | None, str]]:
        try:
            return self._diffs(session.agent, Path(session.record.cwd), payload["patch_id"])
        except Exception:  # noqa: BLE001 - a pruned patch file: show the files without text
            return []

    async def aclose(self) -> None:
        for session in list(self.sessions.values()):
            await _close(session)


async def _close(session: AcpSession) -> None:
    if session.turn is not None and not session.turn.done():
        session.turn.cancel()
    session.ui.closed = True
    try:
        await session.agent.aclose()
        await session.agent.llm.aclose()
    except Exception:  # noqa: BLE001
        log.debug("closing an ACP session failed", exc_info=True)


def _prompt_text(blocks: list[Any], deny_paths: list[str]) -> tuple[str, str | None, list[str]]:
    """The prompt's text, embedded resources (files the client attached) as context, and the
    attachments left out: a secret location (`policy.deny_paths`, `.git/`) or credential content
    is refused as our own file tools refuse it, whoever attached it."""
    texts, context, left_out = [], [], []
    for block in blocks or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource":
            res = block.resource
            if getattr(res, "text", None) is not None:
                uri = str(getattr(res, "uri", ""))
                why = secret_location(unquote(urlparse(uri).path), deny_paths) or (
                    f"its content looks like {secret_kind(res.text)}" if secret_kind(res.text) else None)
                if why:
                    log.warning("ACP: attachment %s left out (%s)", uri[:200], why)
                    left_out.append(uri[:200])
                    continue
                context.append(f"--- {uri}\n{res.text}")
        elif kind == "resource_link":
            texts.append(f"(see {getattr(block, 'uri', '')})")
    return "\n".join(texts), ("\n\n".join(context) or None), left_out


def _command(text: str, mode: str) -> tuple[str, str]:
    """`/plan …`, `/ask …`, `/run …` choose the mode for this prompt; `/undo` undoes the latest apply;
    `/rewind [N|ID] [what]` rewinds to before a prompt (acp/rewind.py, its arguments the text);
    `/review [--staged | --base REF] [path...]` reviews the changes (its arguments are the text)."""
    stripped = text.lstrip()
    if stripped == "/review" or stripped.startswith("/review "):
        return "review", stripped[len("/review"):].strip()
    if stripped == "/rewind" or stripped.startswith("/rewind "):
        return "rewind", stripped[len("/rewind"):].strip()
    for name, chosen in (("/plan", "plan"), ("/ask", "ask"), ("/run", "agent"), ("/undo", "undo"),
                         ("/compact", "compact")):
        if stripped == name or stripped.startswith(name + " "):
            return chosen, stripped[len(name):].strip() or text
    return mode, text


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
