"""The single port through which the core talks to a person.

The agent and the tool host never print, prompt or send LSP messages. They call
a `UIPort`; the CLI implements it on a terminal, the language server with LSP
(`window/showMessageRequest`, `deepseek/stream`, `$/progress`), tests with a
scripted port. Keep this small: every method here is something every adapter
must be able to do.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

ApprovalKind = Literal["patch.apply", "bash.run", "plan.execute", "scope.grow", "mcp.call"]
# Three ways to say "no", kept apart because they mean different things (docs/agent.md, "When the
# answer is no"): `deny` the person refused; `cancel` the person dismissed the question without
# answering it (Esc, Ctrl-C or end of input, an ACP `cancelled` outcome); `timeout` no answer came
# within `policy.approval_timeout_seconds`. Only a deny is a decision on the change itself.
ApprovalAnswer = Literal["allow_once", "always_allow", "deny", "cancel", "timeout"]
Refusal = Literal["deny", "cancel", "timeout"]
ALLOWING: frozenset[str] = frozenset({"allow_once", "always_allow"})


class ApprovalRequest(BaseModel):
    """What the agent wants to do, named exactly (command line, files and hunks)."""

    request_id: str
    kind: ApprovalKind
    title: str
    detail: str = ""
    command: str | None = None
    files: list[str] = Field(default_factory=list)
    hunk_ids: list[str] = Field(default_factory=list)
    patch_id: str | None = None
    session_id: str | None = None


class ApprovalDecision(BaseModel):
    request_id: str
    answer: ApprovalAnswer
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.answer in ALLOWING


StreamChannel = Literal["content", "reasoning", "status"]


class UIPort(Protocol):
    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Block until the person answers (or the adapter's policy answers for them): `deny`, `cancel`
        when they dismissed it, `timeout` when the adapter's own wait for them ran out. The core bounds
        the wait too (`policy.approval_timeout_seconds`) and cancels this call when it is over."""

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        """A clarifying question; None means the person cancelled. Raises `TimeoutError` when the
        adapter's own wait ran out; the core bounds the wait as for approvals."""

    def stream(self, channel: StreamChannel, text: str, *, session_id: str | None = None) -> None:
        """Streamed model output or status text, as it arrives."""

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        """Long work: index build, LLM calls, verification."""


@runtime_checkable
class ToolCallView(Protocol):
    """What an adapter that shows the model's tool calls one line each implements besides `UIPort`
    (the terminal chat). Optional: the runtime tells only the ports that have it."""

    def tool_called(self, name: str, summary: str, ok: bool, *, session_id: str | None = None) -> None:
        """`name` ran with arguments `summary` (short: a path, a query) and succeeded or not."""


class AutoApproveUI:
    """A non-interactive port: answers approvals with a fixed answer, prints nothing.

    Used by `autopilot` (within the allowlist) and by tests that do not exercise
    approvals.
    """

    quiet_waits = True  # nobody waits on it: no "waits for your approval" notification (extensions/notify.py)

    def __init__(self, answer: ApprovalAnswer = "allow_once") -> None:
        self.answer: ApprovalAnswer = answer
        self.approvals: list[ApprovalRequest] = []
        self.streamed: list[tuple[str, str]] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        return ApprovalDecision(request_id=request.request_id, answer=self.answer)

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        return None

    def stream(self, channel: StreamChannel, text: str, *, session_id: str | None = None) -> None:
        self.streamed.append((channel, text))

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        return None
