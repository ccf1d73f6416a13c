"""`Agent`: the facade the language server and the CLI drive.

One instance per workspace; it may hold several sessions. Every public method
is async, runs on the caller's event loop (file reads, patch staging, commands
and the index go to threads; event-log appends are queued in order to the
group-commit writer thread, and each method awaits their fsync before it
returns), is serialised per session, and records everything in that session's
event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable

from deepseek_ls.agent import operations as ops
from deepseek_ls.agent.hetun.driver import MissionNotApproved, require_approved
from deepseek_ls.agent.hetun.undo import MissionUndo, mission_chain, undo_since
from deepseek_ls.agent.intent import TurnFlags
from deepseek_ls.agent.loop import StepOutcome
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.routing_sink import RoutingSink, bound
from deepseek_ls.agent.runaway import RunawayPaused
from deepseek_ls.agent.runtime import (
    AgentFailure,
    BudgetExceeded,
    SessionRuntime,
    build_runtime,
    mode_config,
)
from deepseek_ls.agent.rewind import Rewinder
from deepseek_ls.agent.session import Session, deferred_appends
from deepseek_ls.agent.state import BUSY_STATES, StateChange, StateListener
from deepseek_ls.agent.steps import release_running_step
from deepseek_ls.agent.world import Applier, World
from deepseek_ls.config_models import Config
from deepseek_ls.llm.budget import price_book_for, price_sessions
from deepseek_ls.llm.capacity import CapacityLLM, ModelManager
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy import PathPolicy
from deepseek_ls.policy.approvals import Approvals, Refused
from deepseek_ls.router import explain
from deepseek_ls.sink import NullSink
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import UIPort
from deepseek_ls.workspace import state_dir as workspace_state_dir

if TYPE_CHECKING:
    from deepseek_ls.agent.lanes.runner import LaneAgentFactory

log = logging.getLogger("deepseek_ls.agent")
# Requests long enough that the person may look away: their failure or pause is notified too.
NOTIFIED_OPS = frozenset({"turn", "plan", "run", "run_step"})

# `restorer(checkpoint_ids newest first)`: undo those checkpoints the adapter's way (an editor: onto its
# buffers, 3-way, never over what was typed since); returns an outcome with `restored` and `kept`.
Restorer = Callable[[list[str]], Awaitable[Any]]


class Agent:
    """Built by `agent/assemble.build_agent` (the language server, ACP, the CLI, teammate lanes):
    everything an adapter gives it is a constructor argument, nothing is assigned onto it afterwards."""

    def __init__(
        self,
        root: Path,
        config: Config,
        *,
        llm: Any,
        ui: UIPort,
        overlay: DocumentOverlay | None = None,
        index: Any = None,
        state_dir: Path | None = None,
        patch_dir: Path | None = None,
        mcp: Any = None,
        session_extra: dict[str, Any] | None = None,
        models: ModelManager | None = None,
        applier: Applier | None = None,
        restorer: Restorer | None = None,
        on_state_change: StateListener | None = None,
        clock: Callable[[], float] = time.monotonic,
        read_only: bool = False,
        lane_agents: LaneAgentFactory | None = None,
    ) -> None:
        """`session_extra`: fields added to each new session's `SessionCreated@v1` (a teammate lane
        names its driver and parent). `patch_dir`: where staged patches and checkpoints live
        (default `state_dir`; a lane keeps its own). `applier(patches, patch_id, hunk_ids)`: how an
        editor applies the loop's changes (`World.applier`: into its buffers, unsaved typing
        respected); None: the disk. `restorer(checkpoint_ids newest first)` -> an outcome with
        `restored` and `kept`: how it undoes checkpoints onto its buffers; None: the disk.
        `on_state_change`: a first state listener (`on_state_change()`). `clock`: what wall-time
        budgets are measured with (`World.clock`). `read_only`: every session's tools only read,
        whatever its mode, and no lanes. `lane_agents`: how a teammate lane's agent is built
        (`assemble.lane_agent`); None: this agent never runs lanes itself.

        Every model call goes through one `ModelManager` (`llm/capacity.py`: `max_inflight` per
        model, the lane limit, the shared 429 pause): `models` when given, the one of `llm` when
        it is already a `CapacityLLM` (a teammate lane shares its owner's), else a new one."""
        self.root = Path(root).resolve()
        self.config = config
        shared = isinstance(llm, CapacityLLM) and models in (None, llm.manager)
        client = llm.client if isinstance(llm, CapacityLLM) else llm
        self.models: ModelManager = llm.manager if shared else (models or ModelManager(config))
        self.llm = llm if shared else CapacityLLM(client, self.models) if client is not None else None
        self._owns_capacity = not shared
        # Lifecycle hooks (docs/hooks.md) and the notifications that a session waits or finished.
        from deepseek_ls.extensions.hook_runner import Hooks
        from deepseek_ls.extensions.notify import NotifyingUI

        self.hooks = Hooks(self.root, config.hooks, policy=config.policy, say=self._say)
        self.ui = NotifyingUI(ui, config.notifications, self._notification_hook)
        self.overlay = overlay if overlay is not None else DocumentOverlay(self.root)
        self.index = index
        self.state_dir = Path(state_dir) if state_dir else workspace_state_dir(self.root)
        self.store = SessionStore(self.state_dir)
        self.sink = RoutingSink(self._owner_of_patch)
        self.patches = PatchStore(
            self.root,
            Path(patch_dir) if patch_dir else self.state_dir,
            policy=PathPolicy(self.root, config.policy.deny_paths),
            overlay=self.overlay,
            sink=self.sink,
            gate=SafetyGate.from_config(config.agent_loop, config.policy),
        )
        # The client records LLMCall@v1 through its sink; replay needs those events.
        if isinstance(getattr(client, "sink", None), NullSink):
            client.sink = self.sink
        self.prices = price_book_for(config)
        self._runtimes: dict[str, SessionRuntime] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # The person's MCP servers (`tools.mcp.McpManager`), started when a session first needs tools.
        self.mcp = mcp
        self._state_listeners: list[StateListener] = [on_state_change] if on_state_change is not None else []
        self.session_extra = dict(session_extra or {})
        self.ledger_share: Any = None  # a lane's agent: set by the lane runner (agent/ledger.LaneShare)
        self._told: set[str] = set()  # problems with skill files already said
        # Teammate lanes (agent/lanes): the default for requests that do not say; the editor toggles it.
        self.teammate_mode = config.agent_loop.teammate_mode
        self.applier = applier
        self.restorer = restorer
        self.clock = clock
        self.read_only = read_only
        self.lanes = None
        if lane_agents is not None and not read_only:
            from deepseek_ls.agent.lanes.runner import LaneRunner

            self.lanes = LaneRunner(self, lane_agents)
            self.lanes.clean_leftovers()

    async def aclose(self) -> None:
        """Stop what the agent started (MCP servers, notifications still running); the LLM client is
        its owner's to close."""
        await self.ui.aclose()
        if self._owns_capacity and isinstance(self.llm, CapacityLLM):
            self.llm.detach()
        if self.mcp is not None:
            await self.mcp.aclose()

    # -- state changes ------------------------------------------------------------

    def on_state_change(self, listener: StateListener) -> Callable[[], None]:
        """Call `listener(StateChange)` on every session transition, in order, once its
        event is durable, on the event loop. Adapters push status with it instead of
        polling `session_view`. Returns a function that removes the listener."""
        self._state_listeners.append(listener)
        return lambda: self._state_listeners.remove(listener) if listener in self._state_listeners else None

    def _tell_state(self, session_id: str, from_state: str, to_state: str, reason: str) -> None:
        change = StateChange(session_id, from_state, to_state, reason)
        for listener in list(self._state_listeners):
            try:
                listener(change)
            except Exception:  # noqa: BLE001 - a listener's failure must not stop the session
                log.exception("state listener failed on %s -> %s", from_state, to_state)

    # -- sessions -------------------------------------------------------------

    def _new_session(self, prompt: str, mode: str, extra: dict[str, Any] | None = None) -> SessionRuntime:
        from deepseek_ls.trust import require_trusted_for_yolo

        require_trusted_for_yolo(self.root, mode)  # before anything is recorded
        log_ = self.store.create(self.root, mode=mode, prompt=prompt, extra={**self.session_extra, **(extra or {})})
        session = Session.restore(log_.session_id, log_)
        rt = self._runtimes[session.session_id] = self._make_runtime(session, new=True)
        # A teammate lane's session: its calls are charged to, and capped by, the session it works for.
        session.ledger_share = rt.ledger_share = self.ledger_share
        return rt

    def _runtime(self, session_id: str) -> SessionRuntime:
        sid = self.store.resolve(session_id)
        rt = self._runtimes.get(sid)
        if rt is None:
            session = Session.restore(sid, self.store.open(sid))
            rt = self._make_runtime(session)
            past = session.past_events()  # one more read of the log, shared by both
            rt.router.restore(past)
            rt.classifier.restore(past)
            self._runtimes[sid] = rt
            self._reconcile(rt)
        return rt

    def _reconcile(self, rt: SessionRuntime) -> None:
        """Hunks applied or rejected outside the session (`deepseek-ls apply`, another process) are
        recorded as external events before the next request, so the session continues from the truth."""
        with bound(rt.session):
            for rec in list(rt.session.patches.values()):
                if rec.settled:
                    continue
                try:
                    ps = self.patches.get(rec.patch_id)
                except Exception:  # noqa: BLE001 - a deleted patch file: nothing to reconcile
                    continue
                accepted = [h.hunk_id for h in ps.hunks if h.status == "accepted" and h.hunk_id not in rec.applied]
                rejected = [h.hunk_id for h in ps.hunks if h.status == "rejected" and h.hunk_id not in rec.rejected]
                if accepted:
                    files = sorted({h.file for h in ps.hunks if h.hunk_id in accepted})
                    rt.session.emit("PatchApplied@v1", {"patch_id": ps.patch_id, "hunk_ids": accepted, "files": files,
                                                        "via": "external", "external": True})
                if rejected:
                    rt.session.emit("PatchRejected@v1", {"patch_id": ps.patch_id, "hunk_ids": rejected,
                                                         "reason": "outside this session", "external": True})

    def _make_runtime(self, session: Session, new: bool = False) -> SessionRuntime:
        sid = session.session_id
        session.machine.listener = lambda a, b, reason: session.when_durable(
            lambda: self._tell_state(sid, a, b, reason)
        )
        session.costs.prices = self.prices
        cfg = mode_config(self.config, self._effective_mode(session.mode))
        read_only = self.read_only or session.mode in ops.READ_ONLY_MODES
        skills = self._skills(session, new)
        tools = ToolHost(
            self.root, cfg, sink=session, ui=self.ui, overlay=self.overlay, patches=self.patches,
            index=self.index, session_id=session.session_id, read_only=read_only, mcp=self.mcp,
            limit=session.tool_limit, skills=skills, hooks=self.hooks,
        )
        world = World(self.root, cfg, sink=session, overlay=self.overlay, patches=self.patches,
                      index=self.index, tools=tools, applier=self.applier, clock=self.clock)
        rt = build_runtime(session, world, cfg, self.llm, self.ui)
        rt.lanes = self.lanes
        rt.verify_advisory = session.driver == "lane"
        if session.skills_offered is not None and any(t.name == "skill.load" for t in tools.tools()):
            rt.skills_catalog = session.skills_offered["catalog"]
        return rt

    def _skills(self, session: Session, new: bool) -> Any:
        """The Agent Skills a session offers: those it recorded (`SkillsOffered@v1`; their bodies read
        from disk when loaded); for a `new` session the ones on disk now, recorded; none for an
        earlier session that recorded none (viewing or resuming it writes nothing). A skill file
        left out, or an untrusted workspace's skills, are said once on the status channel."""
        from deepseek_ls.extensions.places import untrusted_notice
        from deepseek_ls.extensions.skills import OfferedSkills, load_skills

        recorded = session.skills_offered
        if recorded is not None:
            return OfferedSkills(tuple(recorded["names"]), recorded["catalog"], live=load_skills(self.root))
        if not new:
            return None
        session_id = session.session_id
        found = load_skills(self.root)
        for said in [*found.problems, untrusted_notice(self.root)]:
            if said and said not in self._told:
                self._told.add(said)
                log.warning("%s", said)
                self.ui.stream("status", said + "\n", session_id=session_id)
        if found.skills:  # recorded once: the session offers these for its life (and its replay)
            session.emit("SkillsOffered@v1", {"names": sorted(found.skills), "catalog": found.catalog()})
        return found

    def _say(self, text: str, session_id: str | None) -> None:
        log.warning("%s", text)
        self.ui.stream("status", text + "\n", session_id=session_id)

    async def _notification_hook(self, message: str, title: str, session_id: str | None) -> None:
        rt = self._runtimes.get(session_id or "")
        await self.hooks.fire("Notification", {"message": message, "title": title},
                              emit=rt.session.emit if rt is not None else _unrecorded, session_id=session_id)

    async def _prompt_hooks(self, rt: SessionRuntime | None, prompt: str, context: str | None,
                            emit: Callable[[str, dict[str, Any]], Any] | None = None) -> str | None:
        """SessionStart and UserPromptSubmit for a new session's request. Returns `context` with what
        they added (the request records it, so a replay asks with it and runs no hook); raises
        `PromptBlocked` when a hook blocked the request or asked to stop."""
        from deepseek_ls.extensions.hook_runner import PromptBlocked

        emit = emit or rt.session.emit  # type: ignore[union-attr]
        sid = rt.session_id if rt is not None else None
        start = await self.hooks.fire("SessionStart", {"source": "startup"}, emit=emit, session_id=sid)
        submit = await self.hooks.fire("UserPromptSubmit", {"prompt": prompt}, emit=emit, session_id=sid)
        stop = start.stop or submit.stop
        if submit.blocked or stop:
            blocked = PromptBlocked(f"a hook blocked this request, nothing was sent to the model: {submit.reason or stop}")
            if rt is not None:  # recorded as decided outside any request: a replay repeats it, runs no hook
                rt.session.machine.to("Failed", str(blocked), error_kind="hook_blocked", external=True)
            raise blocked
        added = [t for t in (start.context_text, submit.context_text) if t]
        if not added:
            return context
        return "\n\n".join([*([context] if context else []), "Context added by hooks:", *added])

    async def _finished(self, rt: SessionRuntime, what: str, *, waiting: bool = False) -> None:
        """The Stop hooks, then the notification that the request is done (`waiting`: and now waits
        for the person, a plan to review)."""
        result = await self.hooks.fire("Stop", {"stop_hook_active": False}, emit=rt.session.emit,
                                       session_id=rt.session_id)
        if result.blocked:
            self._say(f"a Stop hook asks the agent to go on ({result.reason}); deepseek-ls does not continue a "
                      "finished request on a hook's word: send it as your next request if you agree", rt.session_id)
        self.ui.notify_soon(f"{what} ({rt.session.state})", "deepseek-ls", rt.session_id, waiting=waiting)

    def _teammate(self, rt: SessionRuntime, asked: bool | None) -> bool | None:
        """Teammate mode for this request (`asked`, else the agent's default); recorded only when on."""
        rt.teammate_mode = self.teammate_mode if asked is None else asked
        rt.lane_failed.clear()
        return True if rt.teammate_mode else None

    def tell_lanes(self, session_id: str, reason: str) -> None:
        """Lane events change what adapters show (status line, step lenses): told like a transition."""
        rt = self._runtimes.get(session_id)
        if rt is not None:
            state = rt.session.state
            rt.session.when_durable(lambda: self._tell_state(session_id, state, state, reason))

    def _effective_mode(self, mode: str) -> str:
        """A yolo session resumed in a workspace no longer trusted runs as agent (it asks)."""
        from deepseek_ls.trust import yolo_refusal

        if mode == "yolo" and yolo_refusal(self.root):
            log.warning("session in yolo mode resumed in an untrusted workspace: approvals are asked")
            return "agent"
        return mode

    def _owner_of_patch(self, patch_id: str) -> Session | None:
        for rt in self._runtimes.values():
            if patch_id in rt.session.patches:
                return rt.session
        try:
            sid = self.patches.get(patch_id).session_id
        except Exception:  # noqa: BLE001 - unknown patch: nobody to tell
            return None
        return self._runtime(sid).session if sid else None

    @contextlib.asynccontextmanager
    async def _driving(self, rt: SessionRuntime, op: str, **args: Any) -> AsyncIterator[SessionRuntime]:
        """Serialise work on a session, bind its sink, record the request, turn failures into states."""
        lock = self._locks.setdefault(rt.session_id, asyncio.Lock())
        async with lock:
            with bound(rt.session), deferred_appends():
                try:
                    ops.record(rt, op, **args)
                    ops.new_person_action(rt)
                    try:
                        if op in ops.TOOL_OPS:
                            await rt.world.prepare_tools()
                        yield rt
                    except BaseException as exc:
                        if not isinstance(exc, (AgentFailure, BudgetExceeded, RunawayPaused, Refused,
                                                asyncio.CancelledError)) and (
                            getattr(exc, "exit_code", None) is None
                        ):
                            log.exception("agent failure in session %s", rt.session_id)
                        ops.settle_failure(rt, exc)
                        if op in NOTIFIED_OPS and not isinstance(exc, (Refused, asyncio.CancelledError)):
                            # the person may have looked away from a long request: it stopped
                            self.ui.notify_soon(f"stopped ({rt.session.state}): {exc}", "deepseek-ls", rt.session_id)
                        raise
                finally:
                    # Answer only once everything this request logged is durable.
                    await rt.session.synced()

    # -- the API ---------------------------------------------------------------

    async def ask(self, prompt: str, context: str | None = None, *, profile: str | None = None,
                  role: str = "ask", on_session: Callable[[str], None] | None = None,
                  model: str | None = None, stream: bool | None = None) -> dict[str, Any]:
        """A one-shot answer (role `ask`, or `chat` from the REPL), recorded as its own session.

        `context` is what the editor adds (the open file or selection); the workspace context
        (repo map, index hits, files the question names) is gathered here for every caller.
        `on_session(session_id)` is called once the session exists, before the model is asked
        (an editor uses it to cancel the request by session)."""
        rt = self._new_session(prompt, role)
        if on_session is not None:
            on_session(rt.session_id)
        async with self._driving(rt, "ask", prompt=prompt, context=context, profile=profile, role=role,
                                 model=model, stream=stream):
            return await ops.ask(rt, prompt, context, profile, role, model=model, stream=stream)

    async def review(self, source: Any, *, patch: str | None = None, focus: str | None = None,
                     dismissed: frozenset[str] = frozenset(), profile: str | None = None,
                     on_session: Callable[[str], None] | None = None) -> Any:
        """Review a change (`ReviewSource`: the working tree, the staged changes, a base, a patch) and
        return its `ReviewResult`. Read-only: nothing is staged, run or written (agent/review.py).

        Bad input (`ReviewInputError`) is raised before any session exists; a change with nothing
        to review returns a result with `session_id` None and the reason in `note`."""
        from deepseek_ls.agent.review import ReviewResult
        from deepseek_ls.agent.review_input import changes_of, collect

        collected = await collect(self.root, self.config, source, patch)
        changes = changes_of(collected.diff, self.root, self.config, collected.skipped)
        if not changes.files:
            return ReviewResult("", source.model_dump(), [], [s.to_json() for s in changes.skipped],
                                note=f"nothing to review: {source.describe()} has no text changes")
        rt = self._new_session(f"review: {source.describe()}", "review")
        if on_session is not None:
            on_session(rt.session_id)
        rt.override = profile
        async with self._driving(rt, "review", source=source.model_dump(), diff=collected.diff,
                                 skipped=collected.skipped, focus=focus, dismissed=sorted(dismissed),
                                 profile=profile):
            return await ops.review(rt, source.model_dump(), collected.diff, collected.skipped, focus, dismissed)

    async def turn(self, prompt: str, context: str | None = None, *, mode: str | None = None,
                   flags: TurnFlags | None = None, profile: str | None = None,
                   on_session: Callable[[str], None] | None = None,
                   tool_limit: dict[str, Any] | None = None) -> dict[str, Any]:
        """One prompt of a conversation (the terminal chat), routed by its intent (`agent/intent.py`):
        a question is answered, a change request is planned first and carried out (only planned in
        plan mode or with `flags.plan_only`). `flags` are the person's (`--tools=false`,
        `--plan-only`, `--force-execute`); a forced execution in plan mode runs in agent mode.
        Files the prompt `@mentions` are attached. Returns `{session_id, intent, answer?, attached,
        view}`: `answer` as `ask` returns it, `view` the session's (`session_view`).
        `tool_limit` (a custom command's allowed-tools, `{"tools", "bash_prefixes"}`) narrows the
        session's tools; it is recorded with the session, so a resume or a replay keeps it."""
        flags = flags or TurnFlags()
        mode = mode or self.config.agent_loop.mode
        if flags.force_execute and mode == "plan":
            mode = "agent"
        rt = self._new_session(prompt, mode, {"tool_limit": tool_limit} if tool_limit is not None else None)
        if on_session is not None:
            on_session(rt.session_id)
        rt.override = profile
        context = await self._prompt_hooks(rt, prompt, context)
        approvals = Approvals(rt.config.policy, self.ui, sink=rt.session)
        async with self._driving(rt, "turn", prompt=prompt, context=context, flags=flags.to_json(), profile=profile):
            out = await ops.turn(rt, prompt, context, flags, approvals, profile)
        await self._finished(rt, "finished your request")
        return {"session_id": rt.session_id, **out, "view": self.session_view(rt.session_id)}

    async def stage_review_fix(self, session_id: str, fingerprint: str) -> Any:
        """Stage the suggested fix of a finding of review session `session_id` as a pending patch
        (the person's "Apply fix"; accepted or rejected as any hunk). Raises `LookupError` for a
        finding the review does not have or without a fix, `PatchError` when it no longer applies."""
        rt = self._runtime(session_id)
        ops.review_finding(rt, fingerprint, with_fix=True)  # a wrong finding is an error, not a failed session
        async with self._driving(rt, "stage_review_fix", fingerprint=fingerprint):
            return await ops.stage_review_fix(rt, fingerprint)

    async def dismiss_finding(self, session_id: str, fingerprint: str) -> bool:
        """The person dismissed a finding of review `session_id`: later reviews leave it out while its
        code is unchanged (`review_dismiss.py`). Recorded in the session. False: already dismissed."""
        from deepseek_ls.agent.review_dismiss import DismissedFindings

        rt = self._runtime(session_id)
        finding = ops.review_finding(rt, fingerprint)
        new = await asyncio.to_thread(DismissedFindings(self.state_dir, self.root).dismiss, fingerprint,
                                      file=finding["file"], message=finding["message"])
        async with self._driving(rt, "dismiss_finding", fingerprint=fingerprint):
            ops.dismiss_finding(rt, fingerprint)
        return new

    async def plan(self, prompt: str, context: str | None = None, mode: str | None = None,
                   *, profile: str | None = None, on_session: Callable[[str], None] | None = None) -> tuple[str, Plan]:
        """Start a session and make its plan; the session then waits (Paused) for steps to be run.

        `on_session(session_id)` is called once the session exists, before planning starts.
        Raises `SessionCancelled` when the person cancels a clarifying question or leaves it unanswered
        (the session is Paused, the question recorded).
        """
        rt = self._new_session(prompt, mode or self.config.agent_loop.mode)
        if on_session is not None:
            on_session(rt.session_id)
        rt.override = profile
        context = await self._prompt_hooks(rt, prompt, context)
        async with self._driving(rt, "plan", prompt=prompt, context=context, profile=profile):
            plan = await ops.plan(rt, prompt, context)
        await self._finished(rt, "has a plan for you to review", waiting=True)
        return rt.session_id, plan

    async def run_step(self, session_id: str, step_id: str, *, profile: str | None = None,
                       teammate_mode: bool | None = None) -> StepOutcome:
        """Run one step: stage its patches and return their ids (nothing is applied).

        `profile` ("fast" / "max_think") forces the executor's profile for this request.
        A Hetun session's steps run only once its mission is approved (`MissionNotApproved`).
        In teammate mode (`teammate_mode`, default `self.teammate_mode`) a step that starts a wave of
        independent steps runs the whole wave in lanes: every merged step is staged, all their ids returned.
        """
        rt = self._runtime(session_id)
        require_approved(rt.session)
        rt.override = profile
        teammate = self._teammate(rt, teammate_mode)
        async with self._driving(rt, "run_step", step_id=step_id, profile=profile, teammate_mode=teammate):
            outcome = await ops.run_step(rt, step_id)
        if outcome.patch_ids:  # staged edits wait for the person's accept or reject
            count = len(outcome.patch_ids)
            self.ui.notify_soon(f"has {count} change{'s' if count > 1 else ''} for you to review (step {step_id})",
                                "deepseek-ls", rt.session_id, waiting=True)
        return outcome

    async def complete_step(self, session_id: str, step_id: str, *, profile: str | None = None) -> StepOutcome:
        """After the editor accepted/rejected the step's hunks: mark it, verify when the plan is done, recover."""
        rt = self._runtime(session_id)
        rt.override = profile
        async with self._driving(rt, "complete_step", step_id=step_id, profile=profile):
            return await ops.complete_step(rt, step_id)

    async def skip_step(self, session_id: str, step_id: str) -> StepOutcome:
        rt = self._runtime(session_id)
        rt.override = None
        async with self._driving(rt, "skip_step", step_id=step_id):
            return await ops.skip_step(rt, step_id)

    async def revise_plan(self, session_id: str, feedback: str, step_id: str | None = None,
                          *, profile: str | None = None) -> Plan:
        """A new plan version from the person's feedback (a comment on a step, "skip this", "also do X")."""
        rt = self._runtime(session_id)
        rt.override = profile
        async with self._driving(rt, "revise_plan", feedback=feedback, step_id=step_id, profile=profile):
            return await ops.revise_plan(rt, feedback, step_id)

    async def run(self, prompt: str | None = None, *, session_id: str | None = None, mode: str | None = None,
                  approvals: Approvals | None = None, latency_mode: str | None = None,
                  profile: str | None = None, teammate_mode: bool | None = None) -> dict[str, Any]:
        """The whole loop (CLI `run`, `autopilot`): start with `prompt` or resume `session_id` where it stopped.

        `teammate_mode` (default `self.teammate_mode`): independent steps run at once in lanes."""
        if session_id:
            rt = self._runtime(session_id)
        elif prompt:
            # `run` carries no context of its own: what hooks add joins the request as it is recorded.
            from deepseek_ls.extensions.hook_runner import PromptBlocked

            ran: list[tuple[str, dict[str, Any]]] = []
            blocked: PromptBlocked | None = None
            try:
                added = await self._prompt_hooks(None, prompt, None, emit=lambda kind, p: ran.append((kind, p)))
            except PromptBlocked as exc:
                blocked, added = exc, None
            rt = self._new_session(f"{prompt}\n\n{added}" if added else prompt, mode or self.config.agent_loop.mode)
            for kind, payload in ran:
                rt.session.emit(kind, payload)
            if blocked is not None:
                rt.session.machine.to("Failed", str(blocked), error_kind="hook_blocked", external=True)
                raise blocked
        else:
            raise ValueError("give a request or a session id to resume")
        rt.override = profile
        if latency_mode:
            rt.latency_mode = latency_mode
        approvals = approvals or Approvals(rt.config.policy, self.ui, sink=rt.session)
        teammate = self._teammate(rt, teammate_mode)
        async with self._driving(rt, "run", profile=profile, latency_mode=rt.latency_mode, teammate_mode=teammate):
            await ops.run(rt, approvals)
        await self._finished(rt, "finished")
        return self.session_view(rt.session_id)

    async def decide_mission(self, session_id: str, decision: str, text: str | None = None, *,
                             approvals: Approvals | None = None, profile: str | None = None,
                             teammate_mode: bool | None = None) -> dict[str, Any]:
        """The person's decision on a Hetun session's mission card: `approve` runs it straight
        through (checkpoint before the first write), `reject` runs nothing, `modify` re-plans
        with the edited mission `text` and shows a new card. Returns the session view."""
        rt = self._runtime(session_id)
        if rt.session.mode != "hetun":
            raise MissionNotApproved(f"session {session_id} is not a Hetun session (mode {rt.session.mode})")
        rt.override = profile
        approvals = approvals or Approvals(rt.config.policy, self.ui, sink=rt.session)
        teammate = self._teammate(rt, teammate_mode)  # an approved mission runs its independent steps in lanes
        async with self._driving(rt, "decide_mission", decision=decision, text=text, profile=profile,
                                 teammate_mode=teammate):
            await ops.decide_mission(rt, decision, text, approvals)
        return self.session_view(rt.session_id)

    async def undo_mission(self, session_id: str) -> MissionUndo:
        """Undo a Hetun mission in one action: every apply since its checkpoint, newest first, each taken
        out three-way so later edits stay (`restorer`: the editor's buffers; else the disk). Refused
        (nothing changed) when another session applied something since or a later edit overlaps.
        Returns the files restored and those kept as they are (changed after the checkpoint)."""
        import asyncio as _asyncio

        rt = self._runtime(session_id)
        checkpoint = rt.session.hetun.get("checkpoint") or {}
        mark = checkpoint.get("checkpoint_id")
        if not mark:
            raise LookupError(f"session {session_id} has no mission checkpoint (nothing of it was applied)")
        if self.restorer is None:
            plan = await _asyncio.to_thread(undo_since, self.patches, mark, rt.session_id)
            restored, via, kept = plan.restored, "disk", plan.kept
        else:  # the editor's buffers, unsaved typing kept (3-way), all or nothing
            chain = await _asyncio.to_thread(mission_chain, self.patches, mark, rt.session_id)
            outcome = await self.restorer(chain)
            restored, via, kept = outcome.restored, "workspace/applyEdit", outcome.kept
        rt.session.emit("MissionUndone@v1", {"mission_id": checkpoint.get("mission_id", ""), "checkpoint_id": mark,
                                             "files": restored, "via": via, "kept": kept, "external": True})
        return MissionUndo(rt.session_id, list(restored), list(kept), via)

    @property
    def rewinder(self) -> Rewinder:
        """What a rewind would take back (`scope`, `covered`), for an adapter to show before asking."""
        return Rewinder(self)

    def checkpoints(self) -> list[Any]:
        """Every prompt of the workspace as a checkpoint (`agent/rewind.py`), oldest first: what it
        changed, what of it can still be taken out, the rewind that took it back."""
        return Rewinder(self).checkpoints()

    async def rewind(self, session_id: str, what: str = "both") -> Any:
        """Take the code ("code"), the conversation ("conversation") or both back to before the prompt
        of `session_id` (it and every later prompt): the changes of their applies and commands taken
        out 3-way, edits made since kept (`restorer`: the editor's buffers; else the disk). Raises
        `RewindRefused` naming the files when an edit overlaps; nothing is changed then."""
        return await Rewinder(self).rewind(session_id, what)

    async def redo_rewind(self, rewind_id: str | None = None) -> Any:
        """Undo a rewind (the latest one when None): its changes back 3-way, its prompts back."""
        return await Rewinder(self).redo(rewind_id)

    async def run_plan(self, plan: Plan, *, prompt: str, on_session: Callable[[str], None] | None = None,
                       approvals: Approvals | None = None) -> dict[str, Any]:
        """A new session that carries out `plan` (made elsewhere: a teammate lane's step) to the end."""
        rt = self._new_session(prompt, "agent")
        if on_session is not None:
            on_session(rt.session_id)
        approvals = approvals or Approvals(rt.config.policy, self.ui, sink=rt.session)
        async with self._driving(rt, "run_plan", plan=plan.to_json()):
            await ops.run_plan(rt, plan, approvals)
        return self.session_view(rt.session_id)

    def verification_failures(self, session_id: str) -> int | None:
        """How many verifications failed in `session_id`, a session this agent is driving or drove;
        None when it has none in hand (a lane's owner asks its lane agent)."""
        rt = self._runtimes.get(session_id)
        return None if rt is None else rt.session.verification_failures

    async def resume(self, session_id: str) -> dict[str, Any]:
        """Load a session (e.g. after a restart) so the editor can show and continue it."""
        rt = self._runtime(session_id)
        if rt.session.state in BUSY_STATES:
            with bound(rt.session):
                release_running_step(rt, ops.INTERRUPTED)
                rt.session.machine.to("Paused", ops.INTERRUPTED)
        view = self.session_view(rt.session_id)
        return {"session_id": rt.session_id, "state": view["state"], "plan": view["plan"]}

    async def cancel(self, session_id: str) -> bool:
        """Stop a session where it is (Paused; a stopped step can be run again). A running
        request is cancelled by its caller's task (whose failure handling pauses the session)."""
        rt = self._runtime(session_id)
        if rt.session.machine.terminal or rt.session.state in ("Paused", "Idle"):
            return False
        with bound(rt.session):
            ops.record(rt, "cancel")  # replay re-issues it
            return ops.cancel(rt)

    def compact(self, session_id: str, focus: str = "") -> dict[str, Any]:
        """Ask for the session's conversation to be compacted before its next model call (agent/compaction.py),
        keeping what `focus` names. Only a running session has a conversation to compact: each request
        starts from a fresh prompt (instructions, plan, the files it needs), so an idle one is told so."""
        rt = self._runtime(session_id)
        state = rt.session.state
        out: dict[str, Any] = {"session_id": session_id, "state": state, "context": rt.session.context.view()}
        if state not in BUSY_STATES:
            return {**out, "pending": False,
                    "message": f"session {session_id[:13]} is {state}: nothing to compact (each request starts "
                               "from a fresh prompt; a running session is compacted before its next model call)"}
        rt.compact_request = focus.strip()
        return {**out, "pending": True, "message": "the conversation will be compacted before its next model call"}

    def session_view(self, session_id: str) -> dict[str, Any]:
        rt = self._runtimes.get(session_id) or self._runtime(session_id)
        return rt.session.view()

    def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """The session's conversation (`agent/transcript.py`): prompts and answers, each answer
        with its model, routing explanation, tokens and cost."""
        session = (self._runtimes.get(session_id) or self._runtime(session_id)).session
        return session.transcript.turns(session.costs.calls, routing_explanation)

    def sessions(self) -> list[Any]:
        """This workspace's sessions, newest first, each with its `cost` at the configured prices."""
        summaries = self.store.list()
        price_sessions(summaries, self.store.llm_calls(), self.prices)
        return summaries

    def explain_routing(self, session_id: str, decision_id: str | None = None, step_id: str | None = None) -> dict[str, Any]:
        """{decision_id, text, score, threshold, profile, model, escalation, contributions, reason_codes, cost}.

        `cost`: `{session, step}` spends (`Spend.to_json()`), `step` when the decision was a step's.
        """
        session = self._runtime(session_id).session
        decisions = session.decisions
        chosen = None
        if decision_id:
            chosen = next((d for d in decisions if d["decision_id"] == decision_id), None)
        elif step_id:
            chosen = next((d for d in reversed(decisions) if d.get("unit") == f"executor:{step_id}"), None)
        elif decisions:
            chosen = decisions[-1]
        if chosen is None:
            raise KeyError(f"no routing decision {decision_id or step_id or ''} in session {session_id}".strip())
        unit = str(chosen.get("unit") or "")
        step = unit.split(":", 1)[1] if unit.startswith("executor:") else None
        cost = {"session": session.costs.total().to_json(),
                "step": session.costs.step(step).to_json() if step else None}
        return {**routing_explanation(chosen), "cost": cost}


def routing_explanation(d: dict[str, Any]) -> dict[str, Any]:
    keys = ("decision_id", "score", "threshold", "profile", "model", "escalation", "contributions", "reason_codes")
    return {"text": explain(d), **{k: d.get(k) for k in keys}}


def _unrecorded(kind: str, payload: dict[str, Any]) -> None:
    """Where a hook run outside any session is recorded: nowhere (it is said when it fails)."""
