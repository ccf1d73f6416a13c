"""`Agent`: the facade the language server and the CLI drive.

One instance per workspace; it may hold several sessions. Every public method
is async, runs on the caller's event loop (blocking work goes to threads), is
serialised per session, and records everything in that session's event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any, AsyncIterator

from deepseek_ls.agent.failures import FailureClassifier
from deepseek_ls.agent.loop import AgentLoop, StepOutcome
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.routing_sink import RoutingSink, bound
from deepseek_ls.agent.runtime import AgentFailure, SessionCancelled, SessionRuntime
from deepseek_ls.agent.session import Session
from deepseek_ls.agent.verify import Verifier
from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.policy import PathPolicy
from deepseek_ls.policy.approvals import Approvals
from deepseek_ls.router import Router, RouterSignals, explain
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.store.sink import NullSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.tools.overlay import DocumentOverlay
from deepseek_ls.ui_port import UIPort
from deepseek_ls.workspace import state_dir as workspace_state_dir

log = logging.getLogger("deepseek_ls.agent")

ASK_SYSTEM = (
    "You are deepseek-ls, a coding assistant inside the user's editor. Answer the question "
    "about their code concisely; do not propose edits unless asked."
)


class Agent:
    def __init__(
        self,
        root: Path,
        config: Config,
        *,
        llm: Any,
        ui: UIPort,
        overlay: DocumentOverlay | None = None,
        index: Any = None,
        patches: PatchStore | None = None,
        state_dir: Path | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.llm = llm
        self.ui = ui
        self.overlay = overlay if overlay is not None else DocumentOverlay(self.root)
        self.index = index
        self.state_dir = Path(state_dir) if state_dir else workspace_state_dir(self.root)
        self.store = SessionStore(self.state_dir)
        self.sink = RoutingSink(self._owner_of_patch)
        self.patches = patches or PatchStore(
            self.root,
            self.state_dir,
            policy=PathPolicy(self.root, config.policy.deny_paths),
            overlay=self.overlay,
            sink=self.sink,
            gate=SafetyGate.from_config(config.agent_loop),
        )
        if isinstance(getattr(self.patches, "sink", None), NullSink):
            self.patches.sink = self.sink
        # The client records LLMCall@v1 through its sink; replay needs those events.
        if isinstance(getattr(llm, "sink", None), NullSink):
            llm.sink = self.sink
        self.loop = AgentLoop()
        self._runtimes: dict[str, SessionRuntime] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    # -- sessions -------------------------------------------------------------

    def _new_session(self, prompt: str, mode: str) -> Session:
        log_ = self.store.create(self.root, mode=mode, prompt=prompt)
        session = Session.restore(log_.session_id, log_)
        self._runtimes[session.session_id] = self._make_runtime(session)
        return session

    def _runtime(self, session_id: str) -> SessionRuntime:
        sid = self.store.resolve(session_id)
        rt = self._runtimes.get(sid)
        if rt is None:
            session = Session.restore(sid, self.store.open(sid))
            rt = self._make_runtime(session)
            rt.router.restore(session.past_events())
            rt.classifier.restore(session.past_events())
            self._runtimes[sid] = rt
        return rt

    def _make_runtime(self, session: Session, *, yolo: bool = False) -> SessionRuntime:
        cfg = self.config
        if session.mode == "yolo" or yolo:
            cfg = cfg.model_copy(deep=True)
            cfg.policy.approval_mode = "auto"
            cfg.policy.approve_edits = "auto"
            cfg.policy.approve_bash = "auto"
        tools = ToolHost(
            self.root, cfg, sink=session, ui=self.ui, overlay=self.overlay, patches=self.patches,
            index=self.index, session_id=session.session_id, read_only=session.mode == "plan",
        )
        world = World(self.root, cfg, sink=session, overlay=self.overlay, patches=self.patches,
                      index=self.index, tools=tools)
        return self.runtime_for(session, world, cfg)

    def runtime_for(self, session: Session, world: Any, cfg: Config) -> SessionRuntime:
        """Assemble a runtime around `world` (replay passes a recorded world)."""
        loop_cfg = cfg.agent_loop
        return SessionRuntime(
            session=session,
            router=Router(cfg.router, cfg.llm.profiles, sink=session),
            classifier=FailureClassifier(loop_cfg.failure_classifier, session),
            verifier=Verifier(world, session, timeout=loop_cfg.verify_timeout_seconds,
                              fingerprint_lines=loop_cfg.failure_classifier.fingerprint_lines),
            world=world,
            llm=self.llm,
            ui=self.ui,
            config=cfg,
            latency_mode=cfg.router.latency_mode,
        )

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
    async def _driving(self, rt: SessionRuntime) -> AsyncIterator[SessionRuntime]:
        """Serialise work on a session, bind its sink, and turn failures into states."""
        lock = self._locks.setdefault(rt.session_id, asyncio.Lock())
        async with lock:
            with bound(rt.session):
                try:
                    yield rt
                except SessionCancelled:
                    raise
                except AgentFailure as exc:
                    self._fail(rt, str(exc))
                    raise
                except asyncio.CancelledError:
                    self._pause(rt, "cancelled")
                    raise
                except Exception as exc:
                    message = getattr(exc, "user_message", None) or f"{type(exc).__name__}: {exc}"
                    if getattr(exc, "exit_code", None) is not None:  # LLMError: resumable
                        self._pause(rt, message)
                    else:
                        log.exception("agent failure in session %s", rt.session_id)
                        self._fail(rt, message)
                    raise

    def _fail(self, rt: SessionRuntime, reason: str) -> None:
        if rt.session.machine.can("Failed"):
            rt.session.machine.to("Failed", reason)

    def _pause(self, rt: SessionRuntime, reason: str) -> None:
        if rt.session.machine.can("Paused"):
            rt.session.machine.to("Paused", reason)

    # -- the API ---------------------------------------------------------------

    async def ask(self, prompt: str, context: str | None = None, *, profile: str | None = None) -> dict[str, Any]:
        """A one-shot answer (role `ask`), recorded as its own session."""
        session = self._new_session(prompt, "ask")
        rt = self._runtimes[session.session_id]
        async with self._driving(rt):
            decision = rt.router.decide(RouterSignals(prompt=prompt, role="ask", override=profile))  # type: ignore[arg-type]
            messages = [{"role": "system", "content": ASK_SYSTEM}]
            if context:
                messages.append({"role": "user", "content": f"Editor context:\n{context}"})
            messages.append({"role": "user", "content": prompt})
            completion = await rt.complete(messages, decision, role="ask")
            session.emit("TurnAdded@v1", {"role": "assistant", "content": completion.content, "agent_role": "ask"})
        return {
            "session_id": session.session_id,
            "content": completion.content,
            "reasoning": completion.reasoning_content,
            "profile": decision.profile,
            "model": completion.model or decision.model,
            "decision_id": decision.decision_id,
        }

    async def plan(self, prompt: str, context: str | None = None, mode: str | None = None,
                   *, profile: str | None = None) -> tuple[str, Plan]:
        """Start a session and make its plan; the session then waits (Paused) for steps to be run."""
        session = self._new_session(prompt, mode or self.config.agent_loop.mode)
        rt = self._runtimes[session.session_id]
        rt.override = profile
        async with self._driving(rt):
            plan = await self.loop.plan(rt, prompt, context)
            session.machine.to("Paused", "plan ready")
        return session.session_id, plan

    async def run_step(self, session_id: str, step_id: str) -> StepOutcome:
        """Run one step: stage its patches and return their ids (nothing is applied)."""
        rt = self._runtime(session_id)
        async with self._driving(rt):
            return await self.loop.execute_step(rt, step_id)

    async def complete_step(self, session_id: str, step_id: str) -> StepOutcome:
        """After the editor accepted/rejected the step's hunks: mark it, verify when the plan is done, recover."""
        rt = self._runtime(session_id)
        async with self._driving(rt):
            return await self.loop.settle_step(rt, step_id)

    async def skip_step(self, session_id: str, step_id: str) -> StepOutcome:
        rt = self._runtime(session_id)
        async with self._driving(rt):
            plan = self.loop._plan(rt)
            step = plan.step(step_id)
            for rec in rt.session.step_patches(step_id):
                if not rec.settled:
                    await rt.world.reject(rec.patch_id, None, "step skipped")
            self.loop._mark(rt, plan, step, "skipped", "skipped by the user")
            if rt.session.state not in ("Paused",):
                rt.session.machine.to("Paused", "step skipped")
            return await self.loop.after_step(rt, step)

    async def revise_plan(self, session_id: str, feedback: str, step_id: str | None = None) -> Plan:
        rt = self._runtime(session_id)
        async with self._driving(rt):
            plan = await self.loop.revise(rt, feedback, step_id)
            rt.session.machine.to("Paused", "plan revised")
            return plan

    async def run(self, prompt: str | None = None, *, session_id: str | None = None, mode: str | None = None,
                  approvals: Approvals | None = None, latency_mode: str | None = None,
                  profile: str | None = None) -> dict[str, Any]:
        """The whole loop (CLI `run`, `autopilot`): start with `prompt` or resume `session_id` where it stopped."""
        if session_id:
            rt = self._runtime(session_id)
            self._resume_state(rt)
        else:
            if not prompt:
                raise ValueError("give a request or a session id to resume")
            session = self._new_session(prompt, mode or self.config.agent_loop.mode)
            rt = self._runtimes[session.session_id]
        rt.override = profile
        if latency_mode:
            rt.latency_mode = latency_mode
        approvals = approvals or Approvals(rt.config.policy, self.ui, sink=rt.session)
        async with self._driving(rt):
            try:
                await self.loop.run_to_end(rt, approvals)
            except SessionCancelled:
                pass
        return self.session_view(rt.session_id)

    def _resume_state(self, rt: SessionRuntime) -> None:
        """A session killed mid-work is Paused first, so it continues from a legal state."""
        machine = rt.session.machine
        if machine.state in ("Planning", "ExecutingStep", "AwaitingApproval", "AwaitingUserInput", "Verifying"):
            with bound(rt.session):
                machine.to("Paused", "resumed after an interruption")
        if machine.state == "Failed":
            raise AgentFailure(f"session {rt.session_id} failed: {rt.session.last_error}; start a new one or revise its plan")

    async def resume(self, session_id: str) -> dict[str, Any]:
        """Load a session (e.g. after a restart) so the editor can show and continue it."""
        rt = self._runtime(session_id)
        if rt.session.state not in ("Failed", "Completed", "Idle", "Paused"):
            self._resume_state(rt)
        view = self.session_view(rt.session_id)
        return {"session_id": rt.session_id, "state": view["state"], "plan": view["plan"]}

    async def cancel(self, session_id: str) -> bool:
        rt = self._runtime(session_id)
        if rt.session.machine.terminal or rt.session.state in ("Paused", "Idle"):
            return False
        with bound(rt.session):
            self._pause(rt, "cancelled by the user")
        return True

    def session_view(self, session_id: str) -> dict[str, Any]:
        return self._runtime(session_id).session.view()

    def sessions(self) -> list[Any]:
        return self.store.list()

    def explain_routing(self, session_id: str, decision_id: str | None = None, step_id: str | None = None) -> dict[str, Any]:
        """{decision_id, text, score, threshold, profile, model, escalation, contributions, reason_codes}."""
        decisions = self._runtime(session_id).session.decisions
        chosen = None
        if decision_id:
            chosen = next((d for d in decisions if d["decision_id"] == decision_id), None)
        elif step_id:
            chosen = next((d for d in reversed(decisions) if d.get("unit") == f"executor:{step_id}"), None)
        elif decisions:
            chosen = decisions[-1]
        if chosen is None:
            raise KeyError(f"no routing decision {decision_id or step_id or ''} in session {session_id}".strip())
        return routing_explanation(chosen)


def routing_explanation(d: dict[str, Any]) -> dict[str, Any]:
    keys = ("decision_id", "score", "threshold", "profile", "model", "escalation", "contributions", "reason_codes")
    return {"text": explain(d), **{k: d.get(k) for k in keys}}
