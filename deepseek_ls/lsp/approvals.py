"""Approvals on LSP, and the server's `UIPort`.

When the agent must block for an answer the server sends
`window/showMessageRequest` with the choices "Allow once", "Always allow" and
"Deny"; the same pending request can be answered with the commands
`deepseek.approve` / `deepseek.deny` (whichever answer comes first wins), and
`deepseek/pendingApprovals` lists what is waiting. The three ways of not
allowing stay apart: "Deny" (or `deepseek.deny`) denies; a message dismissed
without a choice (a `null` result, `deepseek.cancel`) cancels; no answer
within the wait (`policy.approval_timeout_seconds`, or the request's own
timeout) is a timeout. A client that cannot show the message (an error answer)
leaves the commands to answer, within the same wait.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from deepseek_ls.lsp import attention, names, params
from deepseek_ls.lsp.progress import ProgressTokens, stream
from deepseek_ls.lsp.session_views import sessions_of
from deepseek_ls.lsp.transport.client_requests import ClientRequestFailed

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer
    from deepseek_ls.ui_port import ApprovalAnswer, ApprovalDecision, ApprovalRequest, StreamChannel

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALWAYS_ALLOW = "Always allow"
DENY = "Deny"
CHOICES: dict[str, ApprovalAnswer] = {ALLOW_ONCE: "allow_once", ALWAYS_ALLOW: "always_allow", DENY: "deny"}


class UnknownApproval(LookupError):
    pass


class ApprovalBroker:
    """Pending approval requests and the futures the agent waits on: the approvals
    feature's state of one connection (`DeepSeekServer.feature_state`)."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalDecision]]] = {}
        # Approval kinds the person answered "Always allow" for, on this connection.
        self.always: set[str] = set()

    def open(self, request: ApprovalRequest) -> asyncio.Future[ApprovalDecision]:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._pending[request.request_id] = (request, future)
        return future

    def resolve(self, request_id: str, answer: ApprovalAnswer, reason: str = "") -> ApprovalDecision:
        entry = self._pending.pop(request_id, None)
        if entry is None or entry[1].done():
            raise UnknownApproval(
                f"No pending approval {request_id!r}; it was already answered or cancelled. "
                "List the waiting ones with deepseek/pendingApprovals."
            )
        from deepseek_ls.ui_port import ApprovalDecision  # pydantic: loaded after start-up

        decision = ApprovalDecision(request_id=request_id, answer=answer, reason=reason)
        entry[1].set_result(decision)
        return decision

    def discard(self, request_id: str) -> None:
        self._pending.pop(request_id, None)

    def pending(self) -> list[ApprovalRequest]:
        return [request for request, future in self._pending.values() if not future.done()]

    def cancel_all(self) -> None:
        for _, future in self._pending.values():
            future.cancel()
        self._pending.clear()


def _message(request: ApprovalRequest) -> str:
    lines = [request.title]
    if request.command:
        lines.append(f"Command: {request.command}")
    if request.files:
        lines.append("Files: " + ", ".join(request.files))
    if request.detail:
        lines.append(request.detail)
    return "\n".join(lines)


class LspUI:
    """The `UIPort` of the language server."""

    def __init__(self, ls: DeepSeekServer, broker: ApprovalBroker) -> None:
        self._ls = ls
        self._broker = broker
        self._progress = ProgressTokens(ls)

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        future = self._broker.open(request)
        log.info("approval requested: %s (%s)", request.title, request.request_id)
        asker = asyncio.ensure_future(self._ask_with_message_request(request))
        try:
            return await future
        finally:
            asker.cancel()
            self._broker.discard(request.request_id)
            attention.answered(self._ls, request.session_id, self._waiting())

    async def _ask_with_message_request(self, request: ApprovalRequest) -> None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=_message(request),
            actions=[types.MessageActionItem(title=title) for title in CHOICES],
        )
        try:
            chosen = await self._ls.window_show_message_request_async(params)
        except asyncio.CancelledError:
            raise
        except ClientRequestFailed as error:
            if error.kind != "timeout":  # the client cannot show it: the commands can still answer
                log.warning("showMessageRequest failed (%s); waiting for deepseek.approve/deny", error)
                return
            answer, reason = "timeout", error.reason
        except Exception as error:  # noqa: BLE001 - commands can still answer
            log.warning("showMessageRequest failed (%s); waiting for deepseek.approve/deny", error)
            return
        else:
            title = getattr(chosen, "title", None)
            # A title we did not offer answers nothing we asked: taken as a deny, never as an allow.
            answer: ApprovalAnswer = CHOICES.get(title, "deny") if title else "cancel"
            reason = "" if title else "dismissed"
        try:
            self._broker.resolve(request.request_id, answer, reason)
        except UnknownApproval:
            pass  # already answered by a command

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        try:
            return await self._ask(question, choices)
        finally:
            attention.answered(self._ls, None, self._waiting())

    def notify(self, title: str, message: str, *, session_id: str | None = None, waiting: bool = False) -> None:
        """`deepseek/attention` (lsp/attention.py): a session waits for the person or finished."""
        attention.tell(self._ls, "waiting" if waiting else "finished", title, message, session_id, self._waiting())

    def _waiting(self) -> int:
        """Approvals and questions waiting for the person on this connection (a badge's count)."""
        from deepseek_ls.lsp.questions import QuestionBroker

        return len(self._broker.pending()) + len(self._ls.feature_state(QuestionBroker).pending())

    async def _ask(self, question: str, choices: list[str] | None) -> str | None:
        if not choices:
            # LSP has no free-text prompt: `deepseek/question` + `deepseek.answer` (questions.py).
            from deepseek_ls.lsp.questions import ask_in_editor

            return await ask_in_editor(self._ls, question)
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=question,
            actions=[types.MessageActionItem(title=c) for c in choices],
        )
        try:
            chosen = await self._ls.window_show_message_request_async(params)
        except ClientRequestFailed as error:  # bounded: no answer in time, or one we cannot read
            log.warning("question not answered (%s)", error)
            self._ls.show_message(f"deepseek-ls: the question was not answered ({error.reason}).")
            if error.kind == "timeout":
                raise TimeoutError(error.reason) from None
            return None
        return getattr(chosen, "title", None)

    def stream(self, channel: StreamChannel, text: str, *, session_id: str | None = None) -> None:
        stream(self._ls, channel, text, session_id or sessions_of(self._ls).active)

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        self._progress.progress(token, message, percentage, done=done)


def _broker(ls: DeepSeekServer) -> ApprovalBroker:
    if ls.ui is None:  # the broker answers the UI port the agent asks through
        raise RuntimeError("the server is not initialized")
    return ls.feature_state(ApprovalBroker)


def approve(ls: DeepSeekServer, args: dict[str, Any]) -> dict[str, Any]:
    parsed = params.parse_args(params.ApproveArgs, args)
    answer: ApprovalAnswer = "always_allow" if parsed.always else "allow_once"
    decision = _broker(ls).resolve(parsed.request_id, answer)
    return {"request_id": decision.request_id, "answer": decision.answer}


def deny(ls: DeepSeekServer, args: dict[str, Any]) -> dict[str, Any]:
    parsed = params.parse_args(params.DenyArgs, args)
    decision = _broker(ls).resolve(parsed.request_id, "deny", parsed.reason)
    return {"request_id": decision.request_id, "answer": decision.answer}


def pending_approvals(ls: DeepSeekServer, raw: Any) -> dict[str, Any]:
    return {"approvals": [r.model_dump(mode="json") for r in _broker(ls).pending()]}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command, request

    command(server, names.CMD_APPROVE, approve)
    command(server, names.CMD_DENY, deny)
    request(server, names.REQ_PENDING_APPROVALS, pending_approvals)
