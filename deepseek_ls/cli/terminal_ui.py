"""`TerminalUI`: the `UIPort` of the command line.

Approvals and questions are asked on stderr and answered on stdin (so stdout
stays clean for `--json`); reading stdin happens in a thread so the agent's
event loop keeps running. End of input denies an approval and cancels a
question — a script without answers never hangs.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

_ANSWERS = {"y": "allow_once", "yes": "allow_once", "a": "always_allow", "always": "always_allow",
            "n": "deny", "no": "deny", "": "deny"}


class TerminalUI:
    def __init__(self, *, stdin: TextIO | None = None, err: TextIO | None = None,
                 show_stream: bool = False, show_reasoning: bool = False) -> None:
        self.stdin = stdin or sys.stdin
        self.err = err or sys.stderr
        self.show_stream = show_stream
        self.show_reasoning = show_reasoning
        self._streaming = False

    def _say(self, text: str) -> None:
        if self._streaming:
            self.err.write("\n")
            self._streaming = False
        self.err.write(text + "\n")
        self.err.flush()

    async def _readline(self) -> str | None:
        line = await asyncio.to_thread(self.stdin.readline)
        return None if line == "" else line.rstrip("\n")

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self._say(f"\n── approval needed ({request.kind}) ──\n{request.title}")
        if request.command:
            self._say(f"command: {request.command}")
        if request.detail:
            self._say(request.detail.rstrip())
        while True:
            self.err.write("allow? [y]es once / [a]lways / [n]o: ")
            self.err.flush()
            line = await self._readline()
            if line is None:
                self._say("(no input: denied)")
                return ApprovalDecision(request_id=request.request_id, answer="deny", reason="no input")
            answer = _ANSWERS.get(line.strip().lower())
            if answer is not None:
                return ApprovalDecision(request_id=request.request_id, answer=answer)  # type: ignore[arg-type]
            self._say("please answer y, a or n")

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        self._say(f"\n── the agent asks ──\n{question}")
        if choices:
            self._say("choices: " + ", ".join(choices))
        self.err.write("answer (empty to cancel): ")
        self.err.flush()
        line = await self._readline()
        return line if line and line.strip() else None

    def stream(self, channel: str, text: str, *, session_id: str | None = None) -> None:
        if channel == "status":
            self._say(text)
        elif (channel == "content" and self.show_stream) or (channel == "reasoning" and self.show_reasoning):
            self.err.write(text)
            self.err.flush()
            self._streaming = True

    def progress(self, token: str, message: str, percentage: int | None = None, *, done: bool = False) -> None:
        if done:
            return
        pct = f" {percentage}%" if percentage is not None else ""
        self._say(f"… {message}{pct}")
