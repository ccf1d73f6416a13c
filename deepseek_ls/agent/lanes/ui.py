"""The UI port of a lane: its questions and approvals go to the person through the session's
own UI, labelled with the lane; its status lines are prefixed; its streamed model text is
not shown (several lanes at once would interleave it)."""

from __future__ import annotations

from typing import Any

from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest


class LaneUI:
    quiet_waits = True  # its waits reach the person through the session's own port, which notifies

    def __init__(self, ui: Any, label: str, session_id: str) -> None:
        self.ui = ui
        self.label = label
        self.session_id = session_id  # the orchestrating session: lane lines show in its stream

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self.ui.request_approval(request.model_copy(update={"title": f"[{self.label}] {request.title}"}))

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        return await self.ui.ask_user(f"[{self.label}] {question}", choices)

    def stream(self, channel: Any, text: str, *, session_id: str | None = None) -> None:
        if channel == "status":
            self.ui.stream("status", f"{self.label}: {text}", session_id=self.session_id)

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        self.ui.progress(f"{token}-{self.label.replace(' ', '')}", f"{self.label}: {message}", percentage, done=done)
