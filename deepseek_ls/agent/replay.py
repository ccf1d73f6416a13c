"""Deterministic replay: re-run a session from its log and check it does the same thing.

The agent loop runs again for real — planner, executor, router, classifier,
state machine — but nothing outside it is touched: LLM answers come from the
recorded `LLMCall@v1` responses (and each request must hash to the recorded
`request_hash`), tool and patch results from `ToolResult@v1`, verification from
`VerificationRun@v1`, approvals and answers from the person's recorded replies.
No tool is re-run, no file is written, the real log is not appended to.

The replayed decisions (plans, patches, router decisions, state changes, …)
are compared with the recorded ones; the first difference is reported as a
`ReplayDivergence` naming the event. A session that was killed and resumed is
replayed the same way: each recorded `AgentRequest@v1` is re-issued, and a
request whose recording ends early (the process was killed) stops there.
Patch decisions the editor made between requests are re-injected as inputs.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepseek_ls.agent import operations as ops
from deepseek_ls.agent.intent import TurnFlags
from deepseek_ls.agent.lanes.runner import LaneResult, lane_config
from deepseek_ls.agent.ledger import CAP_REACHED, CHARGED, RecordedShare
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.routing_sink import bound
from deepseek_ls.agent.runtime import build_runtime, mode_config
from deepseek_ls.agent.session import Session
from deepseek_ls.agent.verify import NOT_RUN_PREFIX
from deepseek_ls.agent.world import CommandResult, World
from deepseek_ls.config_models import Config
from deepseek_ls.extensions.skills import OfferedSkills
from deepseek_ls.llm.client import LLMClient, request_hash
from deepseek_ls.llm.errors import error_from_record
from deepseek_ls.llm.types import Completion
from deepseek_ls.patch import ApplyResult, Hunk, PatchError, PatchSet
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy import PolicyViolation
from deepseek_ls.policy.approvals import Approvals, Refused
from deepseek_ls.policy.launch import ProgramNotRun
from deepseek_ls.store.events import Event, validate_payload
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.tools.host import ALL_TOOLS, SKILL_LOAD, ToolHost
from deepseek_ls.tools.registry import Tool
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

COMPARED = {
    "SessionStateChanged@v1",
    "PlanCreated@v1",
    "PlanRevised@v1",
    "StepMarked@v1",
    "RouterDecision@v1",
    "RouterEscalation@v1",
    "PatchStaged@v1",
    "PatchApplied@v1",
    "PatchRejected@v1",
    "VerificationRun@v1",
    "FailureClassified@v1",
    "RunawayDetected@v1",
    "ContextCompacted@v1",
    "UserQuestionAsked@v1",
    "ApprovalRequested@v1",
    "AgentRequest@v1",
    "IntentClassified@v1",
    "HetunSubQuery@v1",
    "HetunResearchFinished@v1",
    "MissionProposed@v1",
    "MissionDecided@v1",
    "LaneSpawned@v1",
    "LaneMerged@v1",
    "ReviewStarted@v1",
    "ReviewFindings@v1",
}
_VOLATILE = {"ts", "duration_ms", "ttft_ms", "total_ms", "created_at", "started_at"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_WIRE_TO_TOOL = {t.wire_name: t.name for t in (*ALL_TOOLS, SKILL_LOAD)} | {t.name: t.name for t in (*ALL_TOOLS, SKILL_LOAD)}


class ReplayDivergence(Exception):
    """The replay did something the recording did not; the message names the first differing event."""


class _EndOfRecording(Exception):
    """The replay needs a recorded result past the current segment (the log ends, or the session was killed here)."""


@dataclass
class ReplayReport:
    session_id: str
    ok: bool
    compared: int
    recorded: int
    message: str
    divergence: dict[str, Any] | None = None
    segments: int = 1

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class MemoryLog:
    """An in-memory event log: the replay never appends to the real one."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.events: list[Event] = []

    def append(self, kind: str, payload: Any) -> Event:
        event = Event(seq_no=len(self.events) + 1, ts="", session_id=self.session_id, kind=kind,
                      payload=validate_payload(kind, dict(payload)))
        self.events.append(event)
        return event

    def read(self) -> list[Event]:
        return list(self.events)


class Recording:
    """The recorded events, served in order per source, bounded by the current segment's end."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.queues: dict[str, deque[Event]] = defaultdict(deque)
        for e in events:
            if e.kind == "ToolResult@v1":
                self.queues[f"tool:{e.payload['tool']}"].append(e)
            elif e.kind == "LLMCall@v1" and str(e.payload.get("role", "")).startswith("hetun."):
                # Hetun's parallel sub-queries end in any order: served by their request, not their turn.
                self.queues["LLMCall@v1:hetun"].append(e)
            elif e.kind in ("LLMCall@v1", "VerificationRun@v1", "ApprovalResolved@v1", "UserQuestionAnswered@v1",
                            "McpToolsListed@v1", "LaneSpawned@v1", CAP_REACHED):
                self.queues[e.kind].append(e)
        self.limit = len(events) + 1  # seq_no bound of the current segment

    def take(self, key: str) -> Event:
        queue = self.queues[key]
        if not queue or queue[0].seq_no > self.limit:
            raise _EndOfRecording(key)
        return queue.popleft()

    def take_optional(self, key: str) -> Event | None:
        """As `take`, but None when the recording has no such event here (e.g. no MCP servers)."""
        queue = self.queues[key]
        if not queue or queue[0].seq_no > self.limit:
            return None
        return queue.popleft()

    def take_matching(self, key: str, predicate: Any) -> Event:
        """The first queued event of `key` (within the segment) for which `predicate(event)` holds."""
        queue = self.queues[key]
        for i, e in enumerate(queue):
            if e.seq_no > self.limit:
                break
            if predicate(e):
                del queue[i]
                return e
        raise _EndOfRecording(key)

    def find(self, kind: str, after: int, **match: Any) -> Event | None:
        for e in self.events:
            if e.seq_no > after and e.kind == kind and all(e.payload.get(k) == v for k, v in match.items()):
                return e
        return None


class ReplayLLM:
    def __init__(self, rec: Recording, config: Config, sink: Any) -> None:
        self.rec = rec
        self.sink = sink
        key_envs = [p.api_key_env for p in config.llm.profiles.values()] + [m.api_key_env for m in config.models.values()]
        env = {name: "replay" for name in key_envs if name} | {config.llm.api_key_env: "replay"}
        self._client = LLMClient(config.llm, env=env)
        self.calls = 0

    async def complete(self, messages, *, role: str, profile: str = "fast", tools=None, on_delta=None,
                       model: str | None = None, stream: bool | None = None, **_: Any) -> Completion:
        self.calls += 1
        if role.startswith("hetun."):
            return self._hetun(messages, role, profile, tools, model, stream)
        event = self.rec.take("LLMCall@v1")
        p = event.payload
        if (p["role"], p["profile"]) != (role, profile):
            raise ReplayDivergence(
                f"LLM call {self.calls} (event {event.seq_no}): recorded role={p['role']} profile={p['profile']}, "
                f"replay asked role={role} profile={profile}"
            )
        resolved = self._client.resolve(profile, model)
        stream = self._client.config.stream if stream is None else stream
        body = self._client.build_body(resolved, messages, stream=stream, tools=tools)
        if p.get("request_hash") and request_hash(body) != p["request_hash"]:
            raise ReplayDivergence(f"LLM call {self.calls} (event {event.seq_no}, {role}): the request differs from the recorded one")
        self.sink.emit("LLMCall@v1", p)
        if p.get("error_kind") == "cancelled":
            raise asyncio.CancelledError()  # live, the request was cancelled here (a cancel, a lane's time budget)
        if p.get("error"):
            raise error_from_record(p)  # the same typed error the live call raised
        return Completion.model_validate(p["response"])


    def compaction_asked(self) -> str | None:
        """The focus of a compaction the person asked for here live (`/compact`): the next recorded call is
        the summarizer's and the compaction it made was manual; None otherwise."""
        queue = self.rec.queues["LLMCall@v1"]
        if not queue or queue[0].payload.get("role") != "compactor":
            return None
        done = self.rec.find("ContextCompacted@v1", queue[0].seq_no)
        if done is None or done.payload.get("trigger") != "manual":
            return None
        return done.payload.get("focus") or ""

    def measure(self, messages, *, profile: str = "fast", model: str | None = None, tools=None) -> Any:
        """Counted as live (compaction decides on it the same way)."""
        return self._client.measure(messages, profile=profile, model=model, tools=tools)

    def _hetun(self, messages, role: str, profile: str, tools, model, stream) -> Completion:
        resolved = self._client.resolve(profile, model)
        stream = self._client.config.stream if stream is None else stream
        wanted = request_hash(self._client.build_body(resolved, messages, stream=stream, tools=tools))
        try:
            event = self.rec.take_matching("LLMCall@v1:hetun", lambda e: e.payload.get("role") == role
                                           and e.payload.get("profile") == profile
                                           and e.payload.get("request_hash") in (wanted, None))
        except _EndOfRecording:
            raise ReplayDivergence(f"LLM call {self.calls} ({role}, {profile}): no recorded call with this request") from None
        self.sink.emit("LLMCall@v1", event.payload)
        if event.payload.get("error"):
            raise error_from_record(event.payload)
        return Completion.model_validate(event.payload["response"])


class ReplayUI:
    def __init__(self, rec: Recording) -> None:
        self.rec = rec

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        event = self.rec.take("ApprovalResolved@v1")
        return ApprovalDecision(request_id=request.request_id, answer=event.payload["answer"],
                                reason=event.payload.get("reason", ""))

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        event = self.rec.take("UserQuestionAnswered@v1")
        if event.payload.get("timed_out"):
            raise TimeoutError("not answered in time (recorded)")
        return None if event.payload.get("cancelled") else event.payload.get("answer")

    def stream(self, channel, text, *, session_id=None) -> None:
        return None

    def progress(self, token, message, percentage=None, *, done=False) -> None:
        return None


class ReplayWorld(World):
    """A `World` whose every effect is served from the recording (and re-emitted, so the fold matches)."""

    def __init__(self, root: Path, config: Config, *, sink: Session, rec: Recording, read_only: bool,
                 skills: Any = None, limit: dict[str, Any] | None = None) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.sink = sink
        self.rec = rec
        self.tools = ToolHost(self.root, config, overlay=DocumentOverlay(self.root), read_only=read_only,
                              skills=skills, limit=limit)
        self.sandbox = self.tools.sandbox  # a Hetun helper block runs again (read-only), its calls served from here
        self._patches: dict[str, PatchSet] = {}
        self.approvals: Approvals | None = None  # the tool host's approvals, answered by ReplayUI

    async def prepare_tools(self) -> None:
        """Offer the MCP tools the recording offered (their calls are served from the log)."""
        event = self.rec.take_optional("McpToolsListed@v1")
        if event is None:
            return
        self.sink.emit("McpToolsListed@v1", event.payload)
        listed = event.payload.get("tools", [])
        self.tools.set_mcp_tools([_recorded_tool(t) for t in listed])
        self._mcp_listed = {t["name"]: t for t in listed}

    def _take(self, tool: str) -> Event:
        event = self.rec.take(f"tool:{tool}")
        self.sink.emit("ToolResult@v1", event.payload)
        return event

    async def read_file(self, rel: str) -> str | None:
        p = self._take("agent.read_file").payload
        if p["value"].get("path") != rel:
            raise ReplayDivergence(f"replay read {rel!r}, the recording read {p['value'].get('path')!r}")
        if not p["ok"]:
            raise PolicyViolation(rel, "read_refused", p.get("error") or "refused")
        return p["value"]["text"]

    async def repo_map(self, query: str | None = None) -> str:
        return self._take("agent.repo_map").payload["value"]["text"]

    async def index_hits(self, query: str, top_k: int = 8) -> tuple[str, int]:
        v = self._take("agent.index_hits").payload["value"]
        return v["text"], v["files"]

    async def similar_paths(self, rel: str) -> list[str]:
        return self._take("agent.similar_paths").payload["value"]["paths"]

    async def clock_over(self, started: float, limit_seconds: float) -> bool:
        return bool(self._take("agent.clock").payload["value"]["over"])

    async def checkpoint(self, files: list[str], label: str, meta: dict[str, Any]) -> str:
        return self._take("agent.checkpoint").payload["value"]["checkpoint_id"]

    async def unsaved(self, files: list[str]) -> list[str]:
        event = self.rec.take_optional("tool:agent.unsaved")  # recorded only where an editor applied
        if event is None:
            return []
        self.sink.emit("ToolResult@v1", event.payload)
        return list(event.payload["value"]["unsaved"])

    def allow_files(self, files: list[str]) -> None:
        return None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tool = _WIRE_TO_TOOL.get(name, name)
        listed = getattr(self, "_mcp_listed", {}).get(tool)
        refused = None
        if listed and listed.get("effect") != "read":
            refused = await self._approve_mcp(listed, arguments)
        event = self.rec.take(f"tool:{tool}")
        if tool == "patch.stage" and event.payload["ok"]:
            self._staged(event)
        self.sink.emit("ToolResult@v1", event.payload)
        if refused is not None:
            raise refused  # live, the person's cancel (or no answer) stopped the step here
        p = event.payload
        return {"ok": p["ok"], "value": p.get("value"), "error": p.get("error")}

    async def _approve_mcp(self, listed: dict[str, Any], arguments: dict[str, Any]) -> Refused | None:
        """An acting MCP tool asked before it ran: ask again, answered from the recording (same events).
        Returns the refusal that stopped the work live, if any."""
        from deepseek_ls.tools.mcp.provider import approve_call
        from deepseek_ls.tools.registry import ToolDenied

        if self.approvals is None:
            raise ReplayDivergence("replay has no approvals for an MCP tool call")
        ctx = self.tools._context("")
        ctx.approvals, ctx.sink = self.approvals, self.sink
        try:
            await approve_call(ctx, listed.get("server", ""), listed.get("tool", ""), listed["name"], arguments,
                               listed.get("fingerprint", ""))  # absent in logs from before it was recorded
        except ToolDenied:
            pass  # the recorded result carries the refusal
        except Refused as exc:
            return exc
        return None

    def _staged(self, result: Event) -> PatchSet:
        patch_id = result.payload["value"]["patch_id"]
        staged = self.rec.find("PatchStaged@v1", 0, patch_id=patch_id)
        if staged is None:
            raise ReplayDivergence(f"patch {patch_id} was staged but its PatchStaged event is missing")
        p = staged.payload
        self.sink.emit("PatchStaged@v1", p)
        ps = PatchSet(
            patch_id=patch_id, created_at="", session_id=p.get("session_id"), diff=p.get("diff", ""),
            files=list(p["files"]), hunks=[Hunk(**h) for h in p["hunks"]],
            approval_required=bool(p.get("approval_required")),
        )
        self._patches[patch_id] = ps
        return ps

    async def stage(self, diff: str, *, session_id: str, allowed_files: list[str]) -> PatchSet:
        event = self.rec.take("tool:patch.stage")
        if not event.payload["ok"]:
            self.sink.emit("ToolResult@v1", event.payload)
            value = event.payload.get("value") or {}
            raise PatchError(event.payload.get("error") or "staging failed", value.get("problems"), value.get("missing_paths"),
                             [tuple(f) for f in value.get("failed_hunks") or []])
        ps = self._staged(event)
        self.sink.emit("ToolResult@v1", event.payload)
        if ps.diff != diff:
            raise ReplayDivergence(f"patch {ps.patch_id}: the replayed diff differs from the recorded one")
        return ps

    async def apply(self, patch_id: str, hunk_ids: list[str] | None = None) -> ApplyResult:
        event = self.rec.take("tool:patch.apply")
        applied = self.rec.find("PatchApplied@v1", 0, patch_id=patch_id)
        if event.payload["ok"] and applied is not None:
            self.sink.emit("PatchApplied@v1", applied.payload)
            for h in self._patches[patch_id].hunks:
                if h.hunk_id in applied.payload["hunk_ids"]:
                    h.status = "accepted"
        self.sink.emit("ToolResult@v1", event.payload)
        if event.payload["ok"]:
            return ApplyResult.model_validate(event.payload["value"])
        return ApplyResult(ok=False, patch_id=patch_id, message=event.payload.get("error") or "")

    async def reject(self, patch_id: str, hunk_ids: list[str] | None = None, reason: str = "") -> None:
        rejected = self.rec.find("PatchRejected@v1", 0, patch_id=patch_id)
        if rejected is not None:
            self.sink.emit("PatchRejected@v1", rejected.payload)
        for h in self._patches.get(patch_id, PatchSet(patch_id=patch_id, created_at="")).hunks:
            if h.status == "pending":
                h.status = "rejected"

    def patch(self, patch_id: str) -> PatchSet:
        return self._patches[patch_id]

    async def run_command(self, command: str, timeout: float) -> CommandResult:
        self._replay_command_approval(command)
        event = self.rec.take("VerificationRun@v1")
        self._last_verify_seq = event.seq_no
        p = event.payload
        if p["command"] != command:
            raise ReplayDivergence(f"replay verified with {command!r}, the recording with {p['command']!r}")
        refusal = p.get("refusal")
        if refusal:  # the person did not approve it live (deny, cancel, no answer)
            raise Refused("bash.run", refusal["answer"], command, refusal.get("reason", ""))
        if p.get("exit_code") is None and str(p.get("output", "")).startswith("refused by policy: "):
            recorded = p["output"][len("refused by policy: "):]
            exc = PolicyViolation(command, "replayed", recorded)
            exc.args = (recorded,)  # the same words as recorded, not wrapped a second time
            raise exc
        if p.get("exit_code") is None and str(p.get("output", "")).startswith(NOT_RUN_PREFIX):
            exc = ProgramNotRun(command, "replayed")
            exc.args = (p["output"][len(NOT_RUN_PREFIX):],)  # the same words as recorded
            raise exc
        return CommandResult(command, p.get("exit_code"), p.get("output", ""), p.get("duration_ms") or 0.0)


    def _replay_command_approval(self, command: str) -> None:
        """A verification command that needed an explicit approval: the question and the answer as recorded."""
        queue = self.rec.queues["VerificationRun@v1"]
        if not queue:
            return
        after, upto = getattr(self, "_last_verify_seq", 0), queue[0].seq_no
        ask = next((e for e in self.rec.events if after < e.seq_no < upto and e.kind == "ApprovalRequested@v1"
                    and e.payload.get("title") == f"Verify: {command}"), None)
        if ask is None:
            return
        self.sink.emit(ask.kind, ask.payload)
        answer = self.rec.take("ApprovalResolved@v1")
        self.sink.emit(answer.kind, answer.payload)


class ReplayLanes:
    """Teammate lanes served from the recording: the lanes' lifecycle events as recorded (their
    own sessions replay on their own); which steps form the wave is the replay's to decide."""

    def __init__(self, rec: Recording) -> None:
        self.rec = rec

    async def problem(self) -> str | None:
        queue = self.rec.queues["LaneSpawned@v1"]
        return None if queue and queue[0].seq_no <= self.rec.limit else "no teammate lanes were recorded here"

    async def run(self, rt: Any, plan: Plan, steps: list[Any]) -> list[LaneResult]:
        order = {s.step_id: i for i, s in enumerate(plan.steps)}
        ids: dict[str, str] = {}  # recorded step id -> the replay's
        lanes: dict[str, str] = {}  # lane id -> the replay's step id
        for step in steps:
            spawned = self.rec.take("LaneSpawned@v1")
            p = spawned.payload
            if p["order"] != order[step.step_id] or p.get("step_title") != step.title:
                raise ReplayDivergence(f"lane {spawned.seq_no}: recorded step {p['order'] + 1} {p.get('step_title')!r}, "
                                       f"replay scheduled step {order[step.step_id] + 1} {step.title!r}")
            ids[p["step_id"]] = step.step_id
            lanes[p["lane_id"]] = step.step_id
            rt.session.emit("LaneSpawned@v1", _swap(p, ids))
        results: dict[str, LaneResult] = {}
        for e in self.rec.events:
            if e.seq_no <= spawned.seq_no or e.payload.get("lane_id") not in lanes:
                continue
            if e.kind not in ("LaneStarted@v1", "LaneCompleted@v1", "LaneFailed@v1", CHARGED):
                continue  # the lanes' calls are charged as recorded: the session's caps see them as live
            p = _swap(e.payload, ids)
            rt.session.emit(e.kind, p)
            if e.kind == "LaneCompleted@v1":
                results[p["step_id"]] = LaneResult(p["lane_id"], p["step_id"], True, p.get("diff", ""), p.get("files", []),
                                                   lane_session_id=p.get("lane_session_id"),
                                                   binary=p.get("binary_files", []),
                                                   modes=p.get("mode_changes", []))
            elif e.kind == "LaneFailed@v1":
                results[p["step_id"]] = LaneResult(p["lane_id"], p["step_id"], False, reason=p["reason"],
                                                   lane_session_id=p.get("lane_session_id"),
                                                   refusal=p.get("refusal"))
            if len(results) == len(steps):
                break
        if any(not r.ok and r.reason == "cancelled" for r in results.values()):
            raise asyncio.CancelledError()  # live, the request was cancelled while its lanes ran
        missing = [s.title for s in steps if s.step_id not in results]
        if missing:
            raise _EndOfRecording(f"lanes of {missing} have no recorded end")
        return [results[s.step_id] for s in steps]


def _swap(payload: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    """`payload` with recorded step ids (also inside branch names) replaced by the replay's."""
    def swap(value: Any) -> Any:
        if isinstance(value, str):
            for old, new in ids.items():
                value = value.replace(old, new)
            return value
        return value
    return {k: swap(v) for k, v in payload.items()}


def normalise(events: list[Event]) -> list[tuple[str, Any]]:
    """The compared events with ids renamed by first appearance and timings dropped."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"<id{len(names) + 1}>")

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub(rename, value)
        if isinstance(value, float):
            return round(value, 6)
        return value

    return [(e.kind, clean(e.payload)) for e in events if e.kind in COMPARED]


async def replay_session(root: Path, state_dir: Path, config: Config, session_id: str) -> ReplayReport:
    """Re-execute `session_id` from its log and compare; never touches the workspace or the log."""
    store = SessionStore(state_dir)
    sid = store.resolve(session_id)
    recorded = store.open(sid).read()
    rec = Recording(recorded)
    created = recorded[0].payload if recorded and recorded[0].kind == "SessionCreated@v1" else {}
    log = MemoryLog(sid)
    session = Session(sid, log)
    session.emit("SessionCreated@v1", created)
    mode = created.get("mode") or "agent"
    cfg = mode_config(lane_config(config) if created.get("driver") == "lane" else config, mode)
    offered = next((e.payload for e in recorded if e.kind == "SkillsOffered@v1"), None)
    skills = OfferedSkills(tuple(offered["names"]), offered["catalog"]) if offered else None
    world = ReplayWorld(root, cfg, sink=session, rec=rec, read_only=mode in ops.READ_ONLY_MODES, skills=skills,
                        limit=created.get("tool_limit"))
    ui = ReplayUI(rec)
    rt = build_runtime(session, world, cfg, ReplayLLM(rec, cfg, session), ui)
    if skills is not None and any(t.name == "skill.load" for t in world.tools.tools()):
        rt.skills_catalog = skills.catalog_text  # the prefix the session was asked with
    rt.lanes = ReplayLanes(rec)
    rt.verify_advisory = created.get("driver") == "lane"
    if created.get("driver") == "lane":
        rt.ledger_share = RecordedShare(rec)  # stopped where its session's cap stopped it live
    approvals = Approvals(cfg.policy, ui, sink=session)
    world.approvals = Approvals(cfg.policy, ui, sink=session)  # a tool host's own, as live
    requests = [e for e in recorded if e.kind == "AgentRequest@v1"]
    bounds = [e.seq_no for e in requests[1:]] + [len(recorded) + 1]
    externals = deque(e for e in recorded if e.payload.get("external"))
    error: str | None = None
    with bound(session):
        for request, limit in zip(requests, bounds):
            while externals and externals[0].seq_no < request.seq_no:
                session.emit(externals[0].kind, externals.popleft().payload)
            rec.limit = limit
            payload = _translate_ids(request.payload, recorded, request.seq_no, log.read())
            session.emit("AgentRequest@v1", payload)
            args = payload.get("args", {})
            try:
                await _reissue(rt, request.payload["op"], args, approvals)
            except _EndOfRecording:
                continue  # the recording of this request ends here (the process was killed)
            except ReplayDivergence as exc:
                error = str(exc)
                break
            except BaseException as exc:  # noqa: BLE001 - live, the same exception became a state
                ops.settle_failure(rt, exc)
        while externals and error is None:  # decided after the last request (a hook blocked the first)
            session.emit(externals[0].kind, externals.popleft().payload)
    return _compare(sid, recorded, log.read(), error, len(requests))


def _uuids(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [u for k, v in value.items() if k not in _VOLATILE for u in _uuids(v)]
    if isinstance(value, list):
        return [u for v in value for u in _uuids(v)]
    return _UUID.findall(value) if isinstance(value, str) else []


def _translate_ids(payload: dict[str, Any], recorded: list[Event], before: int, replayed: list[Event]) -> dict[str, Any]:
    """Recorded ids in a request's arguments → the ids the replay generated for the same things.

    Ids (plans, steps, decisions) are fresh in a replay; the two runs are paired
    position by position over the compared events seen so far.
    """
    mapping: dict[str, str] = {}
    rec_ids = [u for e in recorded if e.seq_no < before and e.kind in COMPARED for u in _uuids(e.payload)]
    new_ids = [u for e in replayed if e.kind in COMPARED for u in _uuids(e.payload)]
    for old, new in zip(rec_ids, new_ids):
        mapping.setdefault(old, new)

    def swap(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub(lambda m: mapping.get(m.group(0), m.group(0)), value)
        return value

    return swap(payload)


def _recorded_tool(listed: dict[str, Any]) -> Tool:
    """A recorded MCP tool offer; its handler never runs (replay serves results from the log)."""
    function = listed.get("schema", {}).get("function", {})

    async def not_replayed(ctx: Any, args: Any) -> Any:
        raise ReplayDivergence(f"replay tried to run MCP tool {listed.get('name')!r}")

    return Tool(listed["name"], function.get("description", ""), None, not_replayed,  # type: ignore[arg-type]
                effect=listed.get("effect", "exec"), json_schema=function.get("parameters") or {"type": "object"})


async def _reissue(rt, op: str, args: dict[str, Any], approvals: Approvals) -> None:
    ops.new_person_action(rt, approvals)
    rt.override = args.get("profile")
    rt.teammate_mode = bool(args.get("teammate_mode"))
    rt.lane_failed.clear()
    if op in ops.TOOL_OPS:
        await rt.world.prepare_tools()
    if op == "run":
        rt.latency_mode = args.get("latency_mode") or rt.latency_mode
        await ops.run(rt, approvals)
    elif op == "plan":
        await ops.plan(rt, args["prompt"], args.get("context"))
    elif op == "turn":
        await ops.turn(rt, args["prompt"], args.get("context"), TurnFlags(**args.get("flags", {})), approvals,
                       args.get("profile"))
    elif op == "ask":
        await ops.ask(rt, args["prompt"], args.get("context"), args.get("profile"), args.get("role", "ask"),
                      model=args.get("model"), stream=args.get("stream"))
    elif op in ("run_step", "complete_step", "skip_step"):
        await getattr(ops, op)(rt, args["step_id"])
    elif op == "run_plan":
        await ops.run_plan(rt, Plan.model_validate(args["plan"]), approvals)
    elif op == "revise_plan":
        await ops.revise_plan(rt, args["feedback"], args.get("step_id"))
    elif op == "review":
        await ops.review(rt, args["source"], args["diff"], args.get("skipped", []), args.get("focus"),
                         args.get("dismissed", ()))
    elif op == "stage_review_fix":
        await ops.stage_review_fix(rt, args["fingerprint"])
    elif op == "dismiss_finding":
        ops.dismiss_finding(rt, args["fingerprint"])
    elif op == "decide_mission":
        await ops.decide_mission(rt, args["decision"], args.get("text"), approvals)
    elif op == "cancel":
        ops.cancel(rt)
    else:
        raise ReplayDivergence(f"unknown recorded request {op!r}")


def _compare(sid: str, recorded: list[Event], replayed: list[Event], error: str | None, segments: int) -> ReplayReport:
    want = [e for e in recorded if e.kind in COMPARED]
    got = [e for e in replayed if e.kind in COMPARED]
    a, b = normalise(want), normalise(got)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return _diverged(sid, want, i, x, y, error, segments, len(b))
    if len(a) != len(b) or error:
        i = min(len(a), len(b))
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        return _diverged(sid, want, i, x, y, error, segments, len(b))
    return ReplayReport(sid, True, len(a), len(recorded),
                        f"replay reproduced all {len(a)} decisions of session {sid}", segments=segments)


def _diverged(sid, want, i, expected, actual, error, segments, replayed_count) -> ReplayReport:
    seq = want[i].seq_no if i < len(want) else None
    if expected and actual:
        what = f"event {seq} ({expected[0]}) differs: recorded {_short(expected[1])}, replayed {_short(actual[1])}"
    elif expected:
        what = f"event {seq} ({expected[0]}) was not reproduced"
    elif actual:
        what = f"the replay produced an extra {actual[0]} after the last recorded event"
    else:
        what = "the replay stopped early"
    message = f"replay diverged at decision {i + 1}: {what}" + (f" ({error})" if error else "")
    return ReplayReport(
        sid, False, replayed_count, len(want), message,
        divergence={"index": i, "seq_no": seq, "expected": expected, "actual": actual, "error": error},
        segments=segments,
    )


def _short(payload: Any) -> str:
    text = str(payload)
    return text if len(text) <= 300 else text[:297] + "..."
