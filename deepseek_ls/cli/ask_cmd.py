"""`deepseek-ls ask`: one question to the model, the answer streamed to stdout.

The question goes through the agent's `ask`, the same as the editor's: it is sent
with the workspace context (repo map, index hits, files it names) and the project's
instructions. Reasoning goes to stderr only with ``--show-reasoning``; ``--json``
prints one object at the end instead of streaming; progress (tokens, elapsed time)
is shown on stderr. The call is recorded as an `ask` session (``deepseek-ls
sessions`` lists it, with its cost). LLM errors print one line on stderr and exit
with their class's code (see docs/llm.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from deepseek_ls.cli.common import add_command, exit_with, print_json, resolve_context
from deepseek_ls.cli.terminal_ui import TerminalUI
from deepseek_ls.llm.errors import InterruptedResponse


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
    from deepseek_ls.cli.agent_cmd import _agent, _drive

    context = resolve_context(args)
    prompt = read_prompt(args.prompt)
    ui = _AskUI(show_reasoning=args.show_reasoning, to_stdout=not args.json)

    async def go() -> dict[str, Any]:
        agent = _agent(context, args, ui)
        try:
            return await agent.ask(prompt, model=args.model, stream=False if args.no_stream else None)
        except InterruptedResponse:
            ui.end_line()
            raise
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    answer = _drive(go)
    if answer is None:
        return 1
    if args.json:
        print_json({k: answer[k] for k in JSON_KEYS})
    else:
        if not ui.printed:  # not streamed (--no-stream): print the whole answer now
            sys.stdout.write(answer["content"])
        _finish_stream(answer["content"], streamed=True)
    return 0


JSON_KEYS = ("content", "reasoning", "usage", "model", "profile", "finish_reason", "timings", "retries",
             "session_id", "cost")


class _AskUI(TerminalUI):
    """The answer to stdout as it arrives, reasoning to stderr when asked; progress on stderr."""

    def __init__(self, *, show_reasoning: bool, to_stdout: bool) -> None:
        super().__init__(show_stream=False, show_reasoning=False)
        self.show_answer_reasoning = show_reasoning
        self.to_stdout = to_stdout
        self.printed = False
        self._reasoning_open = False

    def stream(self, channel: str, text: str, *, session_id: str | None = None) -> None:
        super().stream(channel, text, session_id=session_id)  # counts tokens for the progress line
        if channel == "reasoning" and self.show_answer_reasoning:
            self._clear_live()
            sys.stderr.write(text)
            sys.stderr.flush()
            self._reasoning_open = True
        elif channel == "content" and self.to_stdout:
            self._clear_live()
            if self._reasoning_open:
                sys.stderr.write("\n")
                self._reasoning_open = False
            sys.stdout.write(text)
            sys.stdout.flush()
            self.printed = True

    def end_line(self) -> None:
        if self.printed:
            sys.stdout.write("\n")
            sys.stdout.flush()


def _finish_stream(content: str, *, streamed: bool) -> None:
    if streamed and content and not content.endswith("\n"):
        sys.stdout.write("\n")
        sys.stdout.flush()
