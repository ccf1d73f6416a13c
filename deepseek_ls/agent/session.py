"""One session's live view, folded from its events.

The event log is the source of truth. A `Session` is the sink every service of
the session writes to: `emit()` appends the event durably, then folds it into
the view (state, plan versions, patches per step, router decisions, pending
approvals, counters). `Session.restore()` folds an existing log the same way,
so a resumed session is exactly the session that stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol

from deepseek_ls.agent.context_meter import ContextMeter
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.runaway import RunawayWatch
from deepseek_ls.agent.state import SessionStateMachine
from deepseek_ls.agent.transcript import Transcript
from deepseek_ls.agent.verify import NOT_RUN_PREFIX
from deepseek_ls.llm.budget import CostLedger


# Set (to the event loop) while the agent drives a session: its appends are queued to the
# writer thread instead of waiting for their fsync on the loop; the agent awaits
# `Session.synced()` before it answers, so what it acknowledges is durable.
_DEFERRED: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "deepseek_ls_deferred_appends", default=None
)


@contextlib.contextmanager
def deferred_appends() -> Iterator[None]:
    """Within: `Session.emit` does not wait for the disk (call on the event loop)."""
    token = _DEFERRED.set(asyncio.get_running_loop())
    try:
        yield
    finally:
        _DEFERRED.reset(token)


class LogLike(Protocol):
    def append(self, kind: str, payload: Mapping[str, Any]) -> Any: ...

    def read(self) -> list[Any]: ...


@dataclass
class PatchRecord:
    patch_id: str
    step_id: str | None
    profile: str | None
    decision_id: str | None
    files: list[str]
    hunk_ids: list[str]
    applied: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    # Hunks applied with no checkpoint (accepted one by one in the editor: its own undo takes them back).
    unchecked: bool = False

    @property
    def settled(self) -> bool:
        return set(self.applied) | set(self.rejected) >= set(self.hunk_ids)

    def view(self) -> dict[str, Any]:
        return {
            "patch_id": self.patch_id,
            "step_id": self.step_id,
            "profile": self.profile,
            "decision_id": self.decision_id,
            "files": self.files,
            "hunk_ids": self.hunk_ids,
            "applied": self.applied,
            "rejected": self.rejected,
        }


class Session:
    def __init__(self, session_id: str, log: LogLike) -> None:
        self.session_id = session_id
        self.log = log
        self.machine = SessionStateMachine(self)
        self.prompt: str = ""
        self.mode: str = "agent"
        self.plan: Plan | None = None
        self.plan_versions: list[dict[str, Any]] = []
        self.decisions: list[dict[str, Any]] = []
        self.patches: dict[str, PatchRecord] = {}
        self.pending_approvals: dict[str, dict[str, Any]] = {}
        self.questions: list[dict[str, Any]] = []
        self.last_error: str | None = None
        self.current_step_id: str | None = None
        self.active_decision: dict[str, Any] | None = None
        self.verification_failures = 0
        self.failure_streak = 0
        self.last_failure_class: str | None = None
        self.failures = 0
        self.last_verify_output: str = ""
        self.driver: str | None = None
        # A custom command's allowed-tools: {"tools": [...], "bash_prefixes": [...]}, None: no narrowing.
        self.tool_limit: dict[str, Any] | None = None
        # The Agent Skills the session offers (`SkillsOffered@v1`): fixed for its life, so its prompt
        # prefix stays the same bytes; {"names": [...], "catalog": str}.
        self.skills_offered: dict[str, Any] | None = None
        self.events_seen = 0
        self._pending: list[Future[Any]] = []  # queued appends not yet awaited by synced()
        self._last_write: tuple[Future[Any], asyncio.AbstractEventLoop] | None = None
        self.state_reason: str = ""
        # While paused on a person's "no": {kind, answer (deny|cancel|timeout), subject} (agent/refusals.py).
        self.refusal: dict[str, Any] | None = None
        self.failure_kind: str | None = None  # error class of the failure that stopped the session
        self.resumable = False  # a Failed session whose failure may pass (the model server, a budget)
        self.costs = CostLedger()  # tokens and money of every call; prices set by the agent
        self.ledger_share: Any = None  # a teammate lane's: its calls are charged to its session too (agent/ledger.py)
        self.transcript = Transcript()  # the conversation a chat view shows
        self.context = ContextMeter()  # how full the model's window is (agent/context_meter.py)
        self.runaway = RunawayWatch()  # what the model repeated in a row (agent/runaway.py)
        # Hetun mode: {"research": {nodes, synthesis, ...}, "mission": card, "decision", "checkpoint"}.
        self.hetun: dict[str, Any] = {}
        self.lanes: dict[str, dict[str, Any]] = {}  # teammate lanes by lane_id, in spawn (step) order
        self.review: dict[str, Any] = {}  # a review session's findings so far (agent/review.py)
        self.intent: dict[str, Any] | None = None  # where a conversation's prompt went (`IntentClassified@v1`)
        self.commands_changed: list[dict[str, Any]] = []  # what approved commands changed (`CommandChanged@v1`)
        self.rewinds: list[dict[str, Any]] = []  # rewinds to before this prompt, each with `redone` (agent/rewind.py)

    # -- the sink ----------------------------------------------------------------

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        """Append, then fold into the view (EventSink). Durable on return, except inside
        `deferred_appends()`, where the append is queued and `synced()` waits for it."""
        loop = _DEFERRED.get()
        submit = getattr(self.log, "submit", None)
        if loop is not None and submit is not None:
            stored, future = submit(kind, payload)
            self._pending.append(future)
            self._last_write = (future, loop)
        else:
            event = self.log.append(kind, payload)
            stored = event.payload if hasattr(event, "payload") else payload
            self._last_write = None
        # Fold what the log stores (validated, defaults filled): live and restored views are equal.
        self.fold(kind, dict(stored))
        if kind == "LLMCall@v1" and self.ledger_share is not None:
            self.ledger_share.charge(self.session_id, stored)

    async def synced(self) -> None:
        """Wait until every queued append of this session is durable; raises the first
        write error (`EventLogError`)."""
        error: BaseException | None = None
        while self._pending:
            future = self._pending.pop(0)
            try:
                await asyncio.wrap_future(future)
            except Exception as exc:  # noqa: BLE001 - the first one is raised below
                error = error or exc
        if error is not None:
            raise error

    def when_durable(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the event loop once the last emitted event is durable (in
        emission order with other such callbacks); at once when it already is and no loop runs."""
        if self._last_write is not None:
            future, loop = self._last_write
            future.add_done_callback(lambda _: loop.call_soon_threadsafe(callback))
            return
        try:
            asyncio.get_running_loop().call_soon(callback)
        except RuntimeError:
            callback()

    @classmethod
    def restore(cls, session_id: str, log: LogLike) -> "Session":
        session = cls(session_id, log)
        for event in log.read():
            session.fold(event.kind, event.payload)
        return session

    def past_events(self) -> list[dict[str, Any]]:
        return [{"kind": e.kind, "payload": e.payload, "seq_no": e.seq_no} for e in self.log.read()]

    # -- the fold ----------------------------------------------------------------

    def fold(self, kind: str, p: dict[str, Any]) -> None:
        self.events_seen += 1
        self.costs.fold(kind, p)
        self.transcript.fold(kind, p)
        self.context.fold(kind, p)
        self.runaway.fold(kind, p)
        name = kind.split("@", 1)[0]
        handler = getattr(self, f"_on_{name}", None)
        if handler is not None:
            handler(p)

    def _on_SessionCreated(self, p: dict[str, Any]) -> None:
        self.prompt = p.get("prompt") or ""
        self.mode = p.get("mode") or "agent"
        self.driver = p.get("driver")
        self.tool_limit = p.get("tool_limit")

    def _on_SkillsOffered(self, p: dict[str, Any]) -> None:
        if self.skills_offered is None:
            self.skills_offered = dict(p)

    def _on_IntentClassified(self, p: dict[str, Any]) -> None:
        self.intent = dict(p)

    def _on_SessionStateChanged(self, p: dict[str, Any]) -> None:
        self.machine.state = p["to_state"]
        self.state_reason = p.get("reason") or ""
        self.refusal = p.get("refusal") if p["to_state"] == "Paused" else None
        if p["to_state"] == "Failed":
            self.last_error = p.get("reason") or self.last_error
            self.failure_kind = p.get("error_kind") or self.failure_kind
            self.resumable = bool(p.get("resumable"))
        elif p["to_state"] != "Paused":
            self.resumable = False

    def _on_PlanCreated(self, p: dict[str, Any]) -> None:
        self.plan = Plan.model_validate(p["plan"])
        self.plan_versions.append(p["plan"])

    _on_PlanRevised = _on_PlanCreated

    def _on_StepMarked(self, p: dict[str, Any]) -> None:
        if self.plan is not None and self.plan.plan_id == p["plan_id"]:
            self.plan = self.plan.with_status(p["step_id"], p["status"])
        self.current_step_id = p["step_id"] if p["status"] == "running" else self.current_step_id
        if p["status"] == "failed":
            self.last_error = p.get("reason") or self.last_error
        elif p["status"] == "done":
            self.failure_streak = 0

    def _on_RouterDecision(self, p: dict[str, Any]) -> None:
        self.decisions.append(p)
        if p.get("role") == "executor":
            self.active_decision = p

    def _on_PatchStaged(self, p: dict[str, Any]) -> None:
        decision = self.active_decision or {}
        self.patches[p["patch_id"]] = PatchRecord(
            patch_id=p["patch_id"],
            step_id=self.current_step_id,
            profile=decision.get("profile"),
            decision_id=decision.get("decision_id"),
            files=list(p.get("files", [])),
            hunk_ids=[h.get("hunk_id") for h in p.get("hunks", []) if h.get("hunk_id")],
        )

    def _on_PatchApplied(self, p: dict[str, Any]) -> None:
        rec = self.patches.get(p["patch_id"])
        if rec is not None:
            rec.applied.extend(h for h in p.get("hunk_ids", []) if h not in rec.applied)
            rec.unchecked = rec.unchecked or not p.get("checkpoint_id")

    def _on_PatchRejected(self, p: dict[str, Any]) -> None:
        rec = self.patches.get(p["patch_id"])
        if rec is not None:
            rec.rejected.extend(h for h in p.get("hunk_ids", []) if h not in rec.rejected)

    def _on_ApprovalRequested(self, p: dict[str, Any]) -> None:
        self.pending_approvals[p["request_id"]] = p

    def _on_ApprovalResolved(self, p: dict[str, Any]) -> None:
        self.pending_approvals.pop(p["request_id"], None)

    def _on_UserQuestionAsked(self, p: dict[str, Any]) -> None:
        self.questions.append({"question": p["question"], "answer": None, "cancelled": False})

    def _on_UserQuestionAnswered(self, p: dict[str, Any]) -> None:
        if self.questions:
            self.questions[-1].update(answer=p.get("answer"), cancelled=p.get("cancelled", False))

    def _on_HetunResearchStarted(self, p: dict[str, Any]) -> None:
        self.hetun["research"] = {"nodes": [], "budgets": p.get("budgets", {}), "stop_reason": "running"}

    def _on_HetunSubQuery(self, p: dict[str, Any]) -> None:
        self.hetun.setdefault("research", {"nodes": []})["nodes"].append(p)

    def _on_HetunResearchFinished(self, p: dict[str, Any]) -> None:
        self.hetun.setdefault("research", {"nodes": []}).update(p)

    def _on_MissionProposed(self, p: dict[str, Any]) -> None:
        self.hetun["mission"] = p["mission"]
        self.hetun["decision"] = None

    def _on_MissionDecided(self, p: dict[str, Any]) -> None:
        self.hetun["decision"] = p["decision"]

    def _on_MissionCheckpoint(self, p: dict[str, Any]) -> None:
        self.hetun["checkpoint"] = dict(p)
        self.hetun.pop("undone", None)

    def _on_MissionUndone(self, p: dict[str, Any]) -> None:
        self.hetun["undone"] = dict(p)

    def _on_CommandChanged(self, p: dict[str, Any]) -> None:
        self.commands_changed.append(dict(p))

    def _on_Rewound(self, p: dict[str, Any]) -> None:
        self.rewinds.append({**p, "redone": False})

    def _on_RewindRedone(self, p: dict[str, Any]) -> None:
        for r in self.rewinds:
            if r["rewind_id"] == p["rewind_id"]:
                r["redone"] = True

    def _on_VerificationRun(self, p: dict[str, Any]) -> None:
        if str(p.get("output") or "").startswith(NOT_RUN_PREFIX):
            return  # its program could not run: no failure of the code's (the router counts these)
        if not p.get("ok"):
            self.verification_failures += 1
            self.last_verify_output = f"`{p['command']}` exited {p.get('exit_code')}:\n{(p.get('output') or '')[-4000:]}"

    def _on_FailureClassified(self, p: dict[str, Any]) -> None:
        self.last_failure_class = p["failure_class"]
        self.last_error = p.get("detail") or self.last_error
        self.failure_streak += 1
        self.failures += 1

    def _on_LaneSpawned(self, p: dict[str, Any]) -> None:
        self.lanes[p["lane_id"]] = {"lane_id": p["lane_id"], "lane": len(self.lanes) + 1, "step_id": p["step_id"],
                                    "branch": p.get("branch"), "state": "queued", "reason": ""}

    def _lane(self, p: dict[str, Any], state: str, **more: Any) -> None:
        lane = self.lanes.get(p["lane_id"])
        if lane is not None:
            lane.update(state=state, **more)

    def _on_LaneStarted(self, p: dict[str, Any]) -> None:
        self._lane(p, "running", lane_session_id=p.get("lane_session_id"))

    def _on_LaneCompleted(self, p: dict[str, Any]) -> None:
        self._lane(p, "completed", files=p.get("files", []))

    def _on_LaneFailed(self, p: dict[str, Any]) -> None:
        self._lane(p, "failed", reason=p.get("reason", ""))

    def _on_LaneMerged(self, p: dict[str, Any]) -> None:
        refused = p.get("binary_files") or p.get("mode_changes")
        state = "merged" if p.get("ok") else "refused" if refused else "conflict"
        self._lane(p, state, reason=p.get("conflict") or "")

    def _on_ReviewStarted(self, p: dict[str, Any]) -> None:
        self.review = {"review_id": p["review_id"], "source": p.get("source", {}), "files": p.get("files", []),
                       "skipped": p.get("skipped", []), "findings": [], "dropped": 0, "failed": []}

    def _on_ReviewFindings(self, p: dict[str, Any]) -> None:
        if self.review.get("review_id") == p["review_id"]:
            self.review["findings"] += p.get("findings", [])
            self.review["dropped"] += len(p.get("dropped", []))
            if p.get("error"):
                self.review["failed"].append({"chunk": p.get("chunk"), "files": p.get("files"), "error": p["error"]})

    def lanes_view(self) -> dict[str, Any]:
        """`{running, queued, lanes: [...]}`; a step's lane is the last one spawned for it."""
        lanes = list(self.lanes.values())
        return {"running": sum(1 for lane in lanes if lane["state"] == "running"),
                "queued": sum(1 for lane in lanes if lane["state"] == "queued"),
                "lanes": lanes}

    # -- views -------------------------------------------------------------------

    @property
    def state(self) -> str:
        return self.machine.state

    def step_patches(self, step_id: str) -> list[PatchRecord]:
        return [r for r in self.patches.values() if r.step_id == step_id]

    def files_touched(self) -> int:
        return len({f for r in self.patches.values() for f in r.files})

    def view(self) -> dict[str, Any]:
        """What the language server shows: state, plan with step statuses, patches, decisions."""
        return {
            "session_id": self.session_id,
            "state": self.state,
            "prompt": self.prompt,
            "mode": self.mode,
            "plan": self.plan.to_json() if self.plan else None,
            "plan_versions": len(self.plan_versions),
            "patches": [r.view() for r in self.patches.values()],
            "decisions": self.decisions,
            "pending_approvals": list(self.pending_approvals),
            "questions": self.questions,
            "last_error": self.last_error,
            "state_reason": self.state_reason,
            "refusal": self.refusal,
            "cost": self.costs.summary(calls=False),
            "context": self.context.view(),
            **({"hetun": self.hetun} if self.mode == "hetun" else {}),
            **({"review": self.review} if self.mode == "review" else {}),
            **({"intent": self.intent} if self.intent is not None else {}),
            "lanes": self.lanes_view(),
            **({"rewinds": self.rewinds} if self.rewinds else {}),
            **({"commands_changed": self.commands_changed} if self.commands_changed else {}),
        }
