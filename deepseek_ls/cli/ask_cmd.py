"""`deepseek-ls ask`: one question to the model, the answer streamed to stdout.

Reasoning goes to stderr only with ``--show-reasoning``; ``--json`` prints one
object at the end instead of streaming. The call is recorded as an `ask`
session (``deepseek-ls sessions`` lists it). LLM errors print one line on
stderr and exit with their class's code (see docs/llm.md).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from deepseek_ls.cli.common import CliContext, add_command, exit_with, print_json, resolve_context
from deepseek_ls.llm import Completion, InterruptedResponse, LLMClient, LLMError, StreamDelta
from deepseek_ls.store.sessions import SessionStore

ROLE = "ask"
SYSTEM_PROMPT = (
    "You are deepseek-ls, a coding assistant answering questions about the user's workspace. "
    "Answer concisely; use Markdown code blocks for code."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "ask",
        help="ask the model a question about the workspace (streams the answer)",
        description=(
            "Ask DeepSeek a question; the answer is streamed to stdout ('-' reads the prompt from stdin).\n"
            "Exit codes: 3 auth, 4 balance, 5 rate limited, 6 server, 7 network, 8 bad request, "
            "9 interrupted answer."
        ),
        handler=run,
    )
    parser.add_argument("prompt", nargs="+", help="the question ('-' reads it from stdin)")
    parser.add_argument("--model", help="model name for this call (overrides the profile's)")
    parser.add_argument("--show-reasoning", action="store_true", help="stream the model's reasoning to stderr")
    parser.add_argument("--no-stream", action="store_true", help="ask for the whole answer at once")


def read_prompt(words: list[str]) -> str:
    prompt = sys.stdin.read() if words == ["-"] else " ".join(words)
    if not prompt.strip():
        exit_with("the prompt is empty", code=2)
    return prompt.strip()


def run(args: argparse.Namespace) -> int:
    context = resolve_context(args)
    prompt = read_prompt(args.prompt)
    session = SessionStore(context.state_dir).create(context.root, mode=ROLE, prompt=prompt)
    try:
        completion = asyncio.run(_ask(context, session, prompt, args))
    except LLMError as error:
        if isinstance(error, InterruptedResponse):
            _finish_stream(error.partial.content, streamed=not args.json)
        _mark(session, "Failed", error.user_message)
        session.close()
        exit_with(error)
    _mark(session, "Completed", "answered")
    session.close()
    if args.json:
        print_json(_summary(completion, session.session_id))
    else:
        _finish_stream(completion.content, streamed=True)
    return 0


async def _ask(context: CliContext, session: Any, prompt: str, args: argparse.Namespace) -> Completion:
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
    session.append("TurnAdded@v1", {"role": "user", "content": prompt, "agent_role": ROLE})
    async with LLMClient(context.config.llm, sink=session) as llm:
        completion = await llm.complete(
            messages,
            role=ROLE,
            model=args.model,
            stream=False if args.no_stream else None,
            on_delta=None if args.json else _Printer(args.show_reasoning),
        )
    session.append(
        "TurnAdded@v1",
        {"role": "assistant", "content": completion.content,
         "reasoning_content": completion.reasoning_content, "agent_role": ROLE},
    )
    return completion


def _mark(session: Any, state: str, reason: str) -> None:
    session.append("SessionStateChanged@v1", {"from_state": "Idle", "to_state": state, "reason": reason})


class _Printer:
    """Content to stdout as it arrives; reasoning to stderr when asked, ended by a newline."""

    def __init__(self, show_reasoning: bool) -> None:
        self.show_reasoning = show_reasoning
        self._reasoning_open = False

    def __call__(self, delta: StreamDelta) -> None:
        if delta.kind == "reasoning":
            if self.show_reasoning:
                sys.stderr.write(delta.text)
                sys.stderr.flush()
                self._reasoning_open = True
            return
        if self._reasoning_open:
            sys.stderr.write("\n")
            self._reasoning_open = False
        sys.stdout.write(delta.text)
        sys.stdout.flush()


def _finish_stream(content: str, *, streamed: bool) -> None:
    if streamed and content and not content.endswith("\n"):
        sys.stdout.write("\n")
        sys.stdout.flush()


def _summary(completion: Completion, session_id: str) -> dict[str, Any]:
    return {
        "content": completion.content,
        "reasoning": completion.reasoning_content,
        "usage": completion.usage.model_dump(mode="json"),
        "model": completion.model,
        "profile": completion.profile,
        "finish_reason": completion.finish_reason,
        "timings": {"ttft_ms": completion.ttft_ms, "total_ms": completion.total_ms},
        "retries": completion.retries,
        "session_id": session_id,
    }
