"""`AcpUI`: the core's `UIPort` for one ACP session.

Streamed model text becomes `agent_message_chunk`, reasoning `agent_thought_chunk`,
status lines thoughts too; every approval the policy asks for becomes
`session/request_permission` with allow once / allow always / reject once / reject
always (mapped to our `allow_once` / `always_allow` / `deny`, "reject always"
remembered for the connection). The `cancelled` outcome (the client sends it for every
open request when the person cancels the turn) is our `cancel`, never a deny: the change
stays staged, and the turn ends with stop reason `cancelled` (`client_cancelled`). A
request the client could not be asked (gone), or answered with an option we never offered,
is a cancel too (the turn then ends `end_turn`). How long the person may take is the
core's `policy.approval_timeout_seconds`.
A staged patch is shown as an `edit` tool call with its diff before permission is
asked, and its outcome updates that tool call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any, Callable

from acp import start_tool_call, text_block, tool_content, update_agent_message_text, update_agent_thought_text
from acp.schema import PermissionOption

from deepseek_ls.acp.updates import patch_tool_call
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

log = logging.getLogger(__name__)

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
]
ANSWER = {"allow_once": "allow_once", "allow_always": "always_allow", "reject_once": "deny", "reject_always": "deny"}
KIND = {"patch.apply": "edit", "bash.run": "execute", "mcp.call": "other", "plan.execute": "think", "scope.grow": "think"}


class AcpUI:
    def __init__(self, conn: Any, acp_session_id: str, *, diffs: Callable[[str], list[tuple[str, str | None, str]]],
                 root: Path) -> None:
        self.conn = conn
        self.session_id = acp_session_id
        self.diffs = diffs  # patch_id -> [(absolute path, old text, new text)]
        self.root = root
        self.rejected_always: set[tuple[str, str]] = set()
        self.shown_patches: set[str] = set()
        self.pending: set[asyncio.Task[Any]] = set()
        self.progress_said: dict[str, str] = {}  # token -> the last progress line shown
        self.progress_started: dict[str, float] = {}  # token -> when its first line was shown
        self.progress_chunks: dict[str, int] = {}  # token -> model text chunks streamed while it ran
        self.closed = False
        # Model text is the answer in `ask`; while planning and editing it is plan JSON and
        # diffs, shown as the agent's thinking (the plan and the edits arrive as their own updates).
        self.content_is_answer = True
        # Told our session id as soon as the core streams for it (the turn's session, for cancel).
        self.on_session: Callable[[str], None] | None = None
        # The client answered a permission request of this turn `cancelled`: the turn ends `cancelled`.
        self.client_cancelled = False

    # -- sending -----------------------------------------------------------------------

    def send(self, update: Any) -> None:
        """Queue one `session/update` (the UIPort's stream/progress are synchronous)."""
        if self.closed:
            return
        task = asyncio.get_running_loop().create_task(self._send(update))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def _send(self, update: Any) -> None:
        try:
            await self.conn.session_update(session_id=self.session_id, update=update)
        except Exception as exc:  # noqa: BLE001 - a gone client: stop sending, the session pauses
            log.info("session/update not delivered (%s)", exc)
            self.closed = True

    async def flush(self) -> None:
        """Wait until every queued update was written (before a prompt answers)."""
        while self.pending:
            await asyncio.gather(*list(self.pending), return_exceptions=True)

    # -- UIPort ------------------------------------------------------------------------

    def stream(self, channel: str, text: str, *, session_id: str | None = None) -> None:
        if session_id and self.on_session is not None:
            self.on_session(session_id)
        if not text:
            return
        if channel in ("content", "reasoning"):
            for token in self.progress_chunks:
                self.progress_chunks[token] += 1
        if channel == "content" and self.content_is_answer:
            self.send(update_agent_message_text(text))
        else:  # reasoning, and status lines (verification results, MCP tools, retries)
            self.send(update_agent_thought_text(text))

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        """ACP has no progress notification: what a step is waiting for and which model it asks
        ("planner: queued for M: why", "executor: asking M (max-think)", "verifying: …") is a
        thought line, once per change; so is its end ("planner: done (2.1s, 40 tokens)", "failed",
        "cancelled", "verification passed: …"), with the time since its first line and the model
        text chunks streamed meanwhile (the CLI's count). Percentages are left out."""
        if done:
            started = self.progress_started.pop(token, None)
            chunks = self.progress_chunks.pop(token, 0)
            self.progress_said.pop(token, None)
            if started is None:
                return  # its start was never shown: its end alone says nothing
            tokens = f", {chunks} tokens" if chunks else ""
            self.send(update_agent_thought_text(f"{message} ({time.monotonic() - started:.1f}s{tokens})\n"))
            return
        if percentage is not None or self.progress_said.get(token) == message:
            return
        self.progress_said[token] = message
        self.progress_started.setdefault(token, time.monotonic())
        self.progress_chunks.setdefault(token, 0)
        self.send(update_agent_thought_text(f"{message}\n"))

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        """ACP has no free-text question: choices go through a permission request; otherwise the
        question is shown and the turn stops (the answer comes as the next prompt)."""
        if choices:
            options = [PermissionOption(option_id=str(i), name=c[:80], kind="allow_once") for i, c in enumerate(choices)]
            call = start_tool_call(f"question-{abs(hash(question)) % 10**8}", question[:200], kind="think",
                                   status="pending")
            await self._send(call)
            picked = await self._permission(call, options)
            return choices[int(picked)] if picked is not None and picked.isdigit() else None
        self.send(update_agent_message_text(f"\n{question}\n(answer it in your next message)\n"))
        return None

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        key = (request.kind, request.command or request.patch_id or "*")
        if key in self.rejected_always or (request.kind, "*") in self.rejected_always:
            return ApprovalDecision(request_id=request.request_id, answer="deny", reason="rejected always earlier")
        call = self._tool_call_for(request)
        await self._send(call)
        picked = await self._permission(call, OPTIONS)
        if picked is None:  # cancelled, or no usable answer: not a decision on the change
            return ApprovalDecision(request_id=request.request_id, answer="cancel", reason="the client cancelled")
        if picked == "reject_always":
            self.rejected_always.add(key)
        return ApprovalDecision(request_id=request.request_id, answer=ANSWER.get(picked, "deny"),  # type: ignore[arg-type]
                                reason=f"{picked} in the editor")

    async def confirm(self, call_id: str, title: str, detail: str, yes: str) -> bool:
        """Ask the person one yes/no question as a permission (`yes` or "Cancel"); only `yes` is a yes
        (rejected, cancelled, no usable answer: no). A rewind asks with it (acp/rewind.py)."""
        call = start_tool_call(call_id, title[:200], kind="other", status="pending",
                               content=[tool_content(text_block(detail))] if detail else None)
        await self._send(call)
        options = [PermissionOption(option_id="yes", name=yes, kind="allow_once"),
                   PermissionOption(option_id="no", name="Cancel", kind="reject_once")]
        return await self._permission(call, options) == "yes"

    def _tool_call_for(self, request: ApprovalRequest) -> Any:
        if request.kind == "patch.apply" and request.patch_id:
            self.shown_patches.add(request.patch_id)
            try:
                diffs = self.diffs(request.patch_id)
            except Exception as exc:  # noqa: BLE001 - still ask, with the text we have
                log.warning("no diff for patch %s: %s", request.patch_id, exc)
                diffs = []
            return patch_tool_call(request.patch_id, request.files, diffs)
        detail = [tool_content(text_block(request.detail))] if request.detail else None
        return start_tool_call(f"approval-{request.request_id}", request.title[:200], kind=KIND.get(request.kind, "other"),
                               status="pending", content=detail, raw_input={"command": request.command})

    async def _permission(self, call: Any, options: list[PermissionOption]) -> str | None:
        """The option the client picked; None for `cancelled`, a gone client or an unusable answer."""
        if self.closed:
            return None
        try:
            response = await self.conn.request_permission(session_id=self.session_id, tool_call=_as_update(call),
                                                          options=options)
        except Exception as exc:  # noqa: BLE001 - a gone client or a malformed answer: not answered
            log.info("session/request_permission failed (%s); taken as cancelled", exc)
            return None
        outcome = getattr(response, "outcome", None)
        if getattr(outcome, "outcome", None) == "cancelled":
            self.client_cancelled = True
        picked = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
        if picked is not None and picked not in {o.option_id for o in options}:
            # Only an option we offered is an answer (a mission choice "99" raised IndexError and ended
            # the turn); anything else counts as no answer: cancelled, the question left open.
            log.warning("session/request_permission: option %r was never offered; taken as no answer", picked[:80])
            return None
        return picked


def _as_update(call: Any) -> Any:
    """A `ToolCallStart` as the `ToolCallUpdate` a permission request carries."""
    from acp.schema import ToolCallUpdate

    return ToolCallUpdate(tool_call_id=call.tool_call_id, title=call.title, kind=call.kind, status=call.status,
                          content=call.content, raw_input=call.raw_input)
