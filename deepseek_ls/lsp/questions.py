"""Clarifying questions of the agent, answered in the editor.

LSP has no free-text prompt, so a question without choices is sent as the
notification `deepseek/question`; the client asks the person (an input box)
and answers with the command `deepseek.answer` (`answer: null` cancels).
A `window/showMessage` says the same for clients that do not declare (the
experimental capability `deepseekQuestions`) that they handle the
notification; either way the question stays answerable by the command,
`deepseek/pendingQuestions` lists what is waiting, and `deepseek.cancel` of
the session cancels its question.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.session_views import sessions_of

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

log = logging.getLogger(__name__)


class UnknownQuestion(LookupError):
    pass


@dataclass
class PendingQuestion:
    question_id: str
    session_id: str | None
    question: str
    choices: list[str] | None
    future: asyncio.Future[str | None] = field(repr=False)
    asker: asyncio.Task[Any] | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "question_id": self.question_id,
            "question": self.question,
            "choices": self.choices,
        }


class QuestionBroker:
    """Questions waiting for the person, and the futures the agent awaits: the questions
    feature's state of one connection (`DeepSeekServer.feature_state`)."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingQuestion] = {}

    def open(self, session_id: str | None, question: str, choices: list[str] | None = None) -> PendingQuestion:
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        pending = PendingQuestion(
            uuid.uuid4().hex, session_id, question, choices or None, future, asyncio.current_task()
        )
        self._pending[pending.question_id] = pending
        return pending

    def answer(self, question_id: str, answer: str | None) -> PendingQuestion:
        pending = self._pending.pop(question_id, None)
        if pending is None or pending.future.done():
            raise UnknownQuestion(
                f"No pending question {question_id!r}; it was already answered or cancelled. "
                "List the waiting ones with deepseek/pendingQuestions."
            )
        pending.future.set_result(answer)
        return pending

    def discard(self, question_id: str) -> None:
        self._pending.pop(question_id, None)

    def pending(self) -> list[PendingQuestion]:
        return [q for q in self._pending.values() if not q.future.done()]

    def cancel_session(self, session_id: str) -> list[PendingQuestion]:
        """Answer the session's questions with None (the agent treats it as a cancel)."""
        asked = [q for q in self.pending() if q.session_id in (session_id, None)]
        for pending in asked:
            self.answer(pending.question_id, None)
        return asked

    def cancel_all(self) -> None:
        for pending in self._pending.values():
            pending.future.cancel()
        self._pending.clear()


def _session_id(ls: DeepSeekServer) -> str | None:
    """The session asking: the one bound to the agent's current task, else the editor's active one."""
    from deepseek_ls.agent.routing_sink import current_session

    session = current_session()
    return getattr(session, "session_id", None) or sessions_of(ls).active


def declares(ls: DeepSeekServer, key: str) -> bool:
    """The client set `capabilities.experimental[key]` to true (names.EXPERIMENTAL_*)."""
    experimental = getattr(ls.client_capabilities, "experimental", None)
    return isinstance(experimental, dict) and experimental.get(key) is True


def handles_questions(ls: DeepSeekServer) -> bool:
    """The client said it answers `deepseek/question` itself."""
    return declares(ls, names.EXPERIMENTAL_QUESTIONS)


async def ask_in_editor(ls: DeepSeekServer, question: str, choices: list[str] | None = None) -> str | None:
    """Send `deepseek/question` and wait for `deepseek.answer` (None = cancelled)."""
    questions = ls.feature_state(QuestionBroker)
    pending = questions.open(_session_id(ls), question, choices)
    log.info("question asked: %s (%s)", question, pending.question_id)
    ls.notify(names.NOTIFY_QUESTION, pending.to_json())
    if not handles_questions(ls):
        ls.show_message(
            f"deepseek-ls asks: {question} — answer with the command {names.CMD_ANSWER} "
            f'{{"question_id": "{pending.question_id}", "answer": "..."}} (answer null cancels).',
            types.MessageType.Info,
        )
    try:
        return await pending.future
    finally:
        questions.discard(pending.question_id)


async def cancel_questions(ls: DeepSeekServer, session_id: str, timeout: float = 10.0) -> bool:
    """`deepseek.cancel`: cancel the session's waiting questions and let the agent
    settle them (it returns the session to Idle itself). False when none waited."""
    asked = ls.feature_state(QuestionBroker).cancel_session(session_id)
    askers = [q.asker for q in asked if q.asker is not None and q.asker is not asyncio.current_task()]
    if askers:
        await asyncio.wait(askers, timeout=timeout)
    return bool(asked)


def answer_command(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    parsed = params.parse_args(params.AnswerArgs, args)
    pending = ls.feature_state(QuestionBroker).answer(parsed.question_id, parsed.answer)
    return {"question_id": pending.question_id, "session_id": pending.session_id, "answered": parsed.answer is not None}


def pending_questions(ls: DeepSeekServer, raw: Any) -> dict[str, Any]:
    return {"questions": [q.to_json() for q in ls.feature_state(QuestionBroker).pending()]}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command, request

    command(server, names.CMD_ANSWER, answer_command)
    request(server, names.REQ_PENDING_QUESTIONS, pending_questions)
