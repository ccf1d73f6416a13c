"""Event kinds: the vocabulary of the append-only log.

Every line of `events.jsonl` is an `Event` envelope ``{seq_no, ts, session_id,
kind, payload}``. `kind` is versioned (``Name@v1``) and names a payload model
below; payloads are validated once, when appended. Payload models name the
fields the projections and replay rely on and allow extra fields, so a service
can record more detail without a schema change.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SessionState = Literal[
    "Idle",
    "Planning",
    "ExecutingStep",
    "AwaitingApproval",
    "AwaitingUserInput",
    "Verifying",
    "Completed",
    "Paused",
    "Failed",
]


class Payload(BaseModel):
    model_config = ConfigDict(extra="allow")


class SessionCreated(Payload):
    workspace_root: str
    mode: str = "agent"
    baseline_commit: str | None = None
    prompt: str | None = None


class SessionStateChanged(Payload):
    from_state: SessionState
    to_state: SessionState
    reason: str = ""


class TurnAdded(Payload):
    role: Literal["user", "assistant", "tool", "system"]
    content: str = ""
    reasoning_content: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    tool_call_id: str | None = None
    agent_role: str | None = None


class PlanCreated(Payload):
    plan: dict[str, Any]


class PlanRevised(Payload):
    plan: dict[str, Any]
    previous_version: int
    feedback: str = ""


class StepMarked(Payload):
    plan_id: str
    step_id: str
    status: Literal["pending", "running", "done", "failed", "skipped"]
    reason: str = ""


class RouterDecision(Payload):
    decision_id: str
    unit: str  # the LLM call unit, e.g. "planner" / "executor:step-3"
    role: str
    features: dict[str, float]
    weights: dict[str, float]
    contributions: dict[str, float]
    score: float
    threshold: float
    reason_codes: list[str]
    profile: str
    model: str
    escalation: bool = False


class RouterEscalation(Payload):
    decision_id: str
    from_profile: str
    to_profile: str
    reason_codes: list[str]


class LLMCall(Payload):
    call_id: str
    role: str
    profile: str
    model: str
    request_hash: str
    chunks: list[Any] = Field(default_factory=list)
    response: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    ttft_ms: float | None = None
    total_ms: float | None = None
    retries: int = 0
    error: str | None = None


class ToolProposed(Payload):
    call_id: str
    tool: str
    arguments: dict[str, Any]


class ToolApproved(Payload):
    call_id: str
    tool: str
    answer: str
    by: str = "user"


class ToolResult(Payload):
    call_id: str
    tool: str
    ok: bool
    value: Any = None
    error: str | None = None


class PolicyDecision(Payload):
    subject: str
    allowed: bool
    rule: str
    reason: str = ""


class PatchStaged(Payload):
    patch_id: str
    files: list[str]
    hunks: list[dict[str, Any]]
    diff: str = ""


class PatchApplied(Payload):
    patch_id: str
    hunk_ids: list[str]
    files: list[str]
    via: str = "disk"  # "disk" | "workspace/applyEdit"
    checkpoint_id: str | None = None


class PatchRejected(Payload):
    patch_id: str
    hunk_ids: list[str]
    reason: str = ""


class PatchConflict(Payload):
    patch_id: str
    file: str
    reason: str
    hunk_ids: list[str] = Field(default_factory=list)


class CheckpointRestored(Payload):
    checkpoint_id: str
    files: list[str]


class VerificationRun(Payload):
    command: str
    exit_code: int | None
    ok: bool
    output: str = ""
    duration_ms: float | None = None
    fingerprint: str | None = None


class FailureClassified(Payload):
    failure_class: Literal[
        "PatchMismatch", "MechanicalVerifyFailure", "RepeatedVerifyFailure", "DesignMismatch"
    ]
    detail: str = ""


class RunawayDetected(Payload):
    """The model repeated the same thing `count` times in a row; the session pauses (agent/runaway.py)."""

    streak: Literal["tool_call", "failing_edit", "verification_failure"]
    count: int
    limit: int
    what: str = ""


class ContextCompacted(Payload):
    """Older turns of a model conversation replaced by a structured summary (agent/compaction.py)."""

    trigger: Literal["auto", "manual"]
    role: str
    summary: dict[str, Any]
    replaced: dict[str, Any]  # {start, end, messages, roles, text}
    tokens_before: int
    tokens_after: int | None = None
    window: int | None = None
    focus: str | None = None


class FinishReasonHandled(Payload):
    """An answer that did not end with stop/tool_calls, and what the agent did about it (agent/finish.py)."""

    role: str
    finish_reason: str
    action: Literal["continue", "retry", "stop"]
    attempt: int = 0
    partial_chars: int = 0
    detail: str = ""


class ApprovalRequested(Payload):
    request_id: str
    kind: str
    title: str
    detail: str = ""


class ApprovalResolved(Payload):
    request_id: str
    answer: str


class UserQuestionAsked(Payload):
    question: str
    choices: list[str] | None = None


class UserQuestionAnswered(Payload):
    answer: str | None
    cancelled: bool = False


class AgentRequest(Payload):
    """What a driver (CLI, editor) asked the agent to do; replay re-issues these in order."""

    op: str  # "plan" | "run" | "run_step" | "complete_step" | "skip_step" | "revise_plan" | "ask" | "cancel"
    args: dict[str, Any] = Field(default_factory=dict)


class IntentClassified(Payload):
    """Where a conversation's prompt went (`agent/intent.py`): answered, planned or carried out, and why."""

    intent: Literal["question", "change"]
    route: Literal["answer", "plan", "execute"]
    source: Literal["flag", "heuristic", "model", "default"]
    sure: bool
    reason: str
    cues: list[dict[str, Any]] = Field(default_factory=list)
    model_answer: str | None = None


class McpToolsListed(Payload):
    """The MCP tools offered to the model (name, effect, JSON Schema) and servers that were unavailable."""

    tools: list[dict[str, Any]] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class SkillsOffered(Payload):
    """The Agent Skills a session offers for its life (`extensions/skills.py`): their names and the
    catalog text its prompts carry, so a resume and a replay ask with the same prefix."""

    names: list[str] = Field(default_factory=list)
    catalog: str = ""


class HookRan(Payload):
    """A lifecycle hook ran (`extensions/hook_runner.py`): which, where it was configured, how it
    ended and what it decided (outcome ok/block/error/timeout/not_run). Its output is redacted."""

    event: str
    command: str
    source: str = ""
    outcome: str
    decision: str | None = None
    reason: str = ""
    context: str = ""


class HetunResearchStarted(Payload):
    """A Hetun research phase begins: its budgets and the slices it starts from."""

    budgets: dict[str, Any] = Field(default_factory=dict)
    seeds: list[str] = Field(default_factory=list)


class HetunSubQuery(Payload):
    """One node of the research tree: a sub-query (fast), a cross-check (max-think), the coordinator
    or a helper block, with what it found and what it cost."""

    node_id: str
    parent_id: str | None = None
    kind: str  # "coordinator" | "slice" | "followup" | "crosscheck" | "helper"
    target: str = ""
    depth: int = 0
    profile: str | None = None
    status: str = "ok"  # "ok" | "error" | "refused"
    findings: list[dict[str, Any]] = Field(default_factory=list)
    followups: list[str] = Field(default_factory=list)
    tokens: int = 0
    cost: float | None = None
    error: str | None = None


class HetunResearchFinished(Payload):
    """The research tree is complete (or a budget stopped it: `budget_hit` and `message` say which)."""

    stop_reason: str
    budget_hit: str | None = None
    message: str = ""
    subqueries: int = 0
    tokens: int = 0
    cost: float | None = None
    synthesis: str = ""


class MissionProposed(Payload):
    """The mission card shown for task-level approval (agent/hetun/mission.py)."""

    mission: dict[str, Any]


class MissionDecided(Payload):
    mission_id: str
    decision: Literal["approve", "reject", "modify"]
    text: str | None = None


class MissionCheckpoint(Payload):
    """The checkpoint made before the mission's first write: undoing it undoes the whole mission."""

    mission_id: str
    checkpoint_id: str
    files: list[str] = Field(default_factory=list)


class MissionUndone(Payload):
    """The mission was undone in one action: `files` restored (`via` the editor's buffers or the disk);
    `kept` changed after the checkpoint with no apply of the mission to take out, left as they are."""

    mission_id: str
    checkpoint_id: str
    files: list[str] = Field(default_factory=list)
    via: str = "disk"
    kept: list[str] = Field(default_factory=list)


class CommandChanged(Payload):
    """An approved command created, changed or removed workspace files: they are kept as checkpoint
    `checkpoint_id` (what they held before and after), so a rewind can take the change out;
    `unwatched` names what could not be kept, and why (patch/command_changes.py)."""

    command: str
    checkpoint_id: str | None = None
    files: list[str] = Field(default_factory=list)
    unwatched: list[str] = Field(default_factory=list)


class Rewound(Payload):
    """The person rewound to before this session's prompt (agent/rewind.py): `what` is "code",
    "conversation" or "both"; `sessions` the prompts taken back (this one and every later one);
    `checkpoint_ids` the applies and commands taken out (newest first), `redo_checkpoint` the
    checkpoint that puts them back (a redo), `files` restored, `kept` changed later and left."""

    rewind_id: str
    what: str
    sessions: list[str] = Field(default_factory=list)
    checkpoint_ids: list[str] = Field(default_factory=list)
    redo_checkpoint: str | None = None
    files: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    via: str = "disk"


class RewindRedone(Payload):
    """A rewind was undone: its code put back (3-way, later edits kept), its prompts back in the conversation."""

    rewind_id: str
    files: list[str] = Field(default_factory=list)
    via: str = "disk"


class LaneSpawned(Payload):
    """A step scheduled into a teammate lane (agent/lanes): queued until a lane slot is free."""

    lane_id: str
    step_id: str
    order: int  # the step's index in the plan: lanes are merged in this order
    branch: str
    step_title: str = ""


class LaneStarted(Payload):
    """The lane got its slot and its worktree (made from the workspace's current state)."""

    lane_id: str
    step_id: str
    lane_session_id: str
    worktree: str = ""
    base_files: int = 0  # uncommitted files and unsaved buffers copied into the worktree


class LaneCompleted(Payload):
    """The lane's Architect→Editor→Apply→Verify ended; `diff` is its result against the lane's base."""

    lane_id: str
    step_id: str
    lane_session_id: str
    diff: str = ""  # of its UTF-8 text files
    files: list[str] = Field(default_factory=list)
    binary_files: list[str] = Field(default_factory=list)  # changed files that are not UTF-8 text (not in `diff`)
    mode_changes: list[str] = Field(default_factory=list)  # "path (100644 -> 100755)": not carried by `diff`
    lane_state: str = "Completed"
    verified: bool = False


class LaneFailed(Payload):
    """The lane stopped without a usable result (failed, timed out, cancelled); the step runs in the workspace."""

    lane_id: str
    step_id: str
    reason: str
    lane_session_id: str | None = None
    error_kind: str = ""


class LedgerCharged(Payload):
    """A call a teammate lane made, charged to the session that spawned it (agent/ledger.py)."""

    lane_id: str
    step_id: str
    lane_session_id: str
    call: dict[str, Any]


class LedgerCapReached(Payload):
    """A lane stopped before a call: the session it works for reached a cost or token cap (agent/ledger.py)."""

    session_id: str
    reason: str


class LaneMerged(Payload):
    """The orchestrator staged a lane's result into the workspace (in step order), or could not."""

    lane_id: str
    step_id: str
    ok: bool
    patch_ids: list[str] = Field(default_factory=list)
    conflict: str | None = None  # why it was not merged
    binary_files: list[str] = Field(default_factory=list)  # not merged because these are not UTF-8 text
    mode_changes: list[str] = Field(default_factory=list)  # not merged because it changed these file modes


class ReviewStarted(Payload):
    """A review (agent/review.py) began: which change, its files, what was set aside and why."""

    review_id: str
    source: dict[str, Any]
    files: list[dict[str, Any]] = Field(default_factory=list)
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    changed_lines: int = 0
    chunks: int = 1


class ReviewFindings(Payload):
    """The findings of one piece (`chunk` of `of`) of a review; `error`: its answers were never findings."""

    review_id: str
    chunk: int = 1
    of: int = 1
    files: list[str] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    dropped: list[dict[str, Any]] = Field(default_factory=list)  # outside the diff, duplicates: each with `reason`
    dismissed: list[str] = Field(default_factory=list)  # fingerprints the person dismissed earlier
    summary: str = ""
    error: str | None = None


class ReviewFindingDismissed(Payload):
    """The person dismissed a finding: it stays dismissed while the code it names is unchanged."""

    review_id: str | None = None
    fingerprint: str
    file: str = ""


KINDS: dict[str, type[Payload]] = {
    f"{model.__name__}@v1": model
    for model in (
        SessionCreated,
        SessionStateChanged,
        TurnAdded,
        PlanCreated,
        PlanRevised,
        StepMarked,
        RouterDecision,
        RouterEscalation,
        LLMCall,
        ToolProposed,
        ToolApproved,
        ToolResult,
        PolicyDecision,
        PatchStaged,
        PatchApplied,
        PatchRejected,
        PatchConflict,
        CheckpointRestored,
        VerificationRun,
        FailureClassified,
        RunawayDetected,
        ContextCompacted,
        FinishReasonHandled,
        ApprovalRequested,
        ApprovalResolved,
        UserQuestionAsked,
        UserQuestionAnswered,
        LaneSpawned,
        LaneStarted,
        LaneCompleted,
        LaneFailed,
        LaneMerged,
        LedgerCharged,
        LedgerCapReached,
        AgentRequest,
        IntentClassified,
        McpToolsListed,
        SkillsOffered,
        HookRan,
        HetunResearchStarted,
        HetunSubQuery,
        HetunResearchFinished,
        MissionProposed,
        MissionDecided,
        MissionCheckpoint,
        MissionUndone,
        CommandChanged,
        Rewound,
        RewindRedone,
        ReviewStarted,
        ReviewFindings,
        ReviewFindingDismissed,
    )
}


class UnknownEventKind(ValueError):
    pass


def validate_payload(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Validate `payload` against `kind`'s model; return the JSON-ready dict."""
    model = KINDS.get(kind)
    if model is None:
        raise UnknownEventKind(f"unknown event kind {kind!r}; known: {sorted(KINDS)}")
    return model.model_validate(payload).model_dump(mode="json")


class Event(BaseModel):
    """The envelope of one line of `events.jsonl`."""

    model_config = ConfigDict(extra="forbid")

    seq_no: int = Field(ge=1)
    ts: str
    session_id: str
    kind: str
    payload: dict[str, Any]
