"""Running lanes: one worktree and one lane session per step, at most `max_lanes` at once.

Each lane is a session of its own (`SessionCreated.driver = "lane"`, in the
workspace's session store, replayable like any other) run by an agent rooted
in the lane's worktree, built by the factory the runner is handed (`assemble.lane_agent`: this
package never imports `Agent`, which imports it): its plan is the orchestrator's step, and the ordinary
loop carries it out there — Editor, Apply (to the worktree only: the lane
approves its own edits, nobody else sees that checkout), Verify, recovery.
What comes back is the lane's diff against its base; the orchestrator
(`orchestrator.py`) decides what reaches the person's workspace.

The main session records the lifecycle: `LaneSpawned@v1` (queued, in step
order), `LaneStarted@v1` (slot and worktree taken), `LaneCompleted@v1` (with
the diff) or `LaneFailed@v1` (failed, timed out, cancelled). The worktree and
its branch are removed when the lane ends, whatever the outcome.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from deepseek_ls.agent.lanes import worktree as wt_ops
from deepseek_ls.agent.ledger import LaneShare
from deepseek_ls.agent.lanes.ui import LaneUI
from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.config_models import Config
from deepseek_ls.store.ids import new_id

if TYPE_CHECKING:
    from deepseek_ls.agent.runtime import SessionRuntime
    from deepseek_ls.patch.overlay import DocumentOverlay
    from deepseek_ls.ui_port import UIPort

log = logging.getLogger("deepseek_ls.agent.lanes")


class LaneAgent(Protocol):
    """What the runner asks of a lane's agent (an `Agent`)."""

    async def run_plan(self, plan: Plan, *, prompt: str, on_session: Any = None) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...

    def verification_failures(self, session_id: str) -> int | None: ...

    ledger_share: Any  # its session's calls charged to, and capped by, the session it works for



class LaneOwner(Protocol):
    """What the runner uses of the workspace's agent that owns the lanes (an `Agent`)."""

    root: Path
    state_dir: Path
    models: Any
    llm: Any
    overlay: "DocumentOverlay"

    def tell_lanes(self, session_id: str, reason: str) -> None: ...


class LaneAgentFactory(Protocol):
    """How a lane's agent is built (`assemble.lane_agent`): rooted in the lane's worktree, sharing the
    owner's model client (`llm`) and session store (`state_dir`), its patches in `patch_dir`."""

    def __call__(self, root: Path, config: Config, *, ui: "UIPort", llm: Any, state_dir: Path, patch_dir: Path,
                 session_extra: dict[str, Any]) -> LaneAgent: ...


@dataclass
class LaneResult:
    lane_id: str
    step_id: str
    ok: bool
    diff: str = ""
    files: list[str] = field(default_factory=list)
    reason: str = ""
    lane_session_id: str | None = None
    binary: list[str] = field(default_factory=list)  # changed files that are not UTF-8 text
    modes: list[str] = field(default_factory=list)  # file modes it changed ("run.sh (100644 -> 100755)")
    refusal: dict[str, Any] | None = None  # the lane stopped on the person's "no" (its session's `refusal`)


def branch_name(session_id: str, step_id: str) -> str:
    return f"{wt_ops.BRANCH_PREFIX}{session_id}/{step_id}"


def lane_plan(plan: Plan, step: Step) -> Plan:
    """The lane's plan: the orchestrator's step alone, with the plan's goal and verification."""
    only = step.model_copy(update={"status": "pending", "done": False, "depends_on": []})
    return plan.model_copy(update={"steps": [only], "version": 1})


def lane_config(config: Config) -> Config:
    """A lane's configuration: its edits are approved (they land in its own checkout; the person
    reviews the merged result), no lanes inside lanes, no index (the worktree is new)."""
    cfg = config.model_copy(deep=True)
    cfg.policy.approve_edits = "auto"
    cfg.agent_loop.teammate_mode = False
    cfg.index.enabled = False
    return cfg


class LaneRunner:
    """Runs lanes for one workspace agent (live). Replay has its own (`replay.ReplayLanes`)."""

    def __init__(self, owner: LaneOwner, make_agent: LaneAgentFactory) -> None:
        self.owner = owner
        self.make_agent = make_agent
        # The owner's model manager and client: the lanes' calls and the owner's sessions' calls
        # share the per-model limits and the 429 pause (a lane agent built with `self.llm` shares it too).
        self.manager = owner.models
        self.llm = owner.llm
        self.active: dict[str, dict[str, Any]] = {}  # lane_id -> what the status line shows

    async def problem(self) -> str | None:
        """Why lanes cannot run here (no git repository, no commit), or None."""
        return await asyncio.to_thread(wt_ops.repo_problem, self.owner.root)

    async def run(self, rt: "SessionRuntime", plan: Plan, steps: list[Step]) -> list[LaneResult]:
        """Run `steps` in lanes at once (bounded by the lane limit); results in step order."""
        session = rt.session
        order = {s.step_id: i for i, s in enumerate(plan.steps)}
        lanes = []
        for step in steps:
            lane_id = new_id()
            branch = branch_name(session.session_id, step.step_id)
            session.emit("LaneSpawned@v1", {"lane_id": lane_id, "step_id": step.step_id, "order": order[step.step_id],
                                            "branch": branch, "step_title": step.title})
            lanes.append((lane_id, branch, step))
        self.owner.tell_lanes(session.session_id, f"{len(lanes)} lanes queued")
        buffers = {rel: doc[0] for rel in self.owner.overlay.open_paths()
                   if (doc := self.owner.overlay.get(rel)) is not None}
        tasks = [asyncio.ensure_future(self._lane(rt, plan, step, lane_id, branch, n, buffers))
                 for n, (lane_id, branch, step) in enumerate(lanes, start=1)]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()

    async def _lane(self, rt: "SessionRuntime", plan: Plan, step: Step, lane_id: str, branch: str, number: int,
                    buffers: dict[str, str]) -> LaneResult:
        session = rt.session
        label = f"lane {number}"
        timeout = rt.config.agent_loop.lane_timeout_seconds
        self.active[lane_id] = {"lane": number, "step_id": step.step_id, "state": "queued"}
        tree: wt_ops.Worktree | None = None
        lane_sid: str | None = None
        try:
            async with self.manager.lane_slot():
                self.active[lane_id]["state"] = "running"
                try:
                    async with asyncio.timeout(timeout):
                        tree, cancelled = await _to_thread_to_end(
                            wt_ops.create, self.owner.root, self.owner.state_dir, lane_id, branch, buffers=buffers,
                            deny_paths=rt.config.policy.deny_paths)
                        if cancelled:
                            raise asyncio.CancelledError
                        agent = self._lane_agent(rt, tree, label)
                        agent.ledger_share = LaneShare(session, lane_id, step.step_id)
                        started = asyncio.get_running_loop().create_future()

                        def on_session(sid: str) -> None:
                            session.emit("LaneStarted@v1", {"lane_id": lane_id, "step_id": step.step_id,
                                                            "lane_session_id": sid, "worktree": str(tree.tree),
                                                            "base_files": tree.copied})
                            started.set_result(sid)
                            self.owner.tell_lanes(session.session_id, f"{label} started")

                        rt.ui.stream("status", f"{label}: step '{step.title}' started in {tree.tree}",
                                     session_id=session.session_id)
                        try:
                            view = await agent.run_plan(lane_plan(plan, step), prompt=session.prompt,
                                                        on_session=on_session)
                        finally:
                            lane_sid = started.result() if started.done() else None
                            await agent.aclose()
                        verified = agent.verification_failures(lane_sid or "") == 0
                        files = sorted({f for p in view["patches"] if p["applied"] for f in p["files"]})
                        result = await asyncio.to_thread(wt_ops.result_diff, tree, files)
                except TimeoutError:
                    return self._failed(rt, lane_id, step, f"the lane ran longer than agent_loop.lane_timeout_seconds "
                                        f"({timeout:g}s) and was cancelled", lane_sid, "LaneTimeout")
            if view["state"] != "Completed":
                why = view.get("last_error") if view["state"] == "Failed" else view.get("state_reason")
                return self._failed(rt, lane_id, step, f"the lane ended {view['state']}: {why or 'no reason given'}",
                                    lane_sid, "Lane" + view["state"], refusal=view.get("refusal"))
            session.emit("LaneCompleted@v1", {"lane_id": lane_id, "step_id": step.step_id, "lane_session_id": lane_sid,
                                              "diff": result.diff, "files": files, "binary_files": result.binary,
                                              "mode_changes": result.modes,
                                              "lane_state": view["state"], "verified": verified})
            rt.ui.stream("status", f"{label}: step '{step.title}' done ({len(files)} file(s) changed)",
                         session_id=session.session_id)
            self.owner.tell_lanes(session.session_id, f"{label} completed")
            return LaneResult(lane_id, step.step_id, True, result.diff, files, lane_session_id=lane_sid,
                              binary=result.binary, modes=result.modes)
        except asyncio.CancelledError:
            self._failed(rt, lane_id, step, "cancelled", lane_sid, "CancelledError")
            raise
        except Exception as exc:  # noqa: BLE001 - one lane's failure never takes the others down
            said = getattr(exc, "user_message", None)  # a model error says what happened: no traceback
            log.warning("lane %s failed: %s", lane_id, exc,
                        exc_info=said is None and not isinstance(exc, wt_ops.LaneError))
            return self._failed(rt, lane_id, step, said or str(exc) or type(exc).__name__, lane_sid,
                                type(exc).__name__)
        finally:
            self.active.pop(lane_id, None)
            if tree is not None:
                cancelled = False
                try:
                    _, cancelled = await _to_thread_to_end(wt_ops.remove, tree)
                except Exception as exc:  # noqa: BLE001 - the next start cleans what is left
                    log.warning("could not remove lane worktree %s: %s", tree.tree, exc)
                if cancelled:
                    raise asyncio.CancelledError

    def _failed(self, rt: "SessionRuntime", lane_id: str, step: Step, reason: str, lane_sid: str | None,
                kind: str, refusal: dict[str, Any] | None = None) -> LaneResult:
        rt.session.emit("LaneFailed@v1", {"lane_id": lane_id, "step_id": step.step_id, "reason": reason,
                                          "lane_session_id": lane_sid, "error_kind": kind,
                                          **({"refusal": refusal} if refusal else {})})
        then = "the session pauses" if refusal else "it runs in the workspace instead"
        rt.ui.stream("status", f"lane for step '{step.title}' failed: {reason}; {then}", session_id=rt.session_id)
        self.owner.tell_lanes(rt.session_id, "lane failed")
        return LaneResult(lane_id, step.step_id, False, reason=reason, lane_session_id=lane_sid, refusal=refusal)

    def _lane_agent(self, rt: "SessionRuntime", tree: wt_ops.Worktree, label: str) -> LaneAgent:
        extra = {"driver": "lane", "parent_session_id": rt.session_id, "lane_id": tree.lane_id}
        return self.make_agent(tree.root, lane_config(rt.config), ui=LaneUI(rt.ui, label, rt.session_id),
                               llm=self.llm, state_dir=self.owner.state_dir,
                               patch_dir=tree.owner_file.parent / tree.lane_id, session_extra=extra)

    def clean_leftovers(self) -> None:
        """Remove lanes a killed or crashed run left behind (their process is gone). Cheap when none:
        git only runs when an owner file is there."""
        owners = self.owner.state_dir / "lanes"
        if owners.is_dir() and any(owners.glob("*.json")):
            try:
                removed = wt_ops.cleanup_stale(self.owner.root, self.owner.state_dir)
            except wt_ops.LaneError as exc:
                log.warning("could not clean up lanes left by an earlier run: %s", exc)
                return
            if removed:
                log.info("removed %d lane(s) left by an earlier run: %s", len(removed), ", ".join(removed))

    def view(self) -> dict[str, Any]:
        return {**self.manager.view(), "lanes": list(self.active.values())}


async def _to_thread_to_end(call: Any, /, *args: Any, **kwargs: Any) -> tuple[Any, bool]:
    """`call` in a thread, awaited to its end even when the task is cancelled (once or again)
    meanwhile: a worktree half made, or half removed, would be left behind. Returns the result
    and whether a cancel came meanwhile (the caller raises it once it has what it needs)."""
    future = asyncio.ensure_future(asyncio.to_thread(call, *args, **kwargs))
    cancelled = False
    while True:
        try:
            return await asyncio.shield(future), cancelled
        except asyncio.CancelledError:
            if future.cancelled():
                raise
            cancelled = True
