"""`deepseek-ls chat`: the terminal chat (docs/chat.md).

A message is a turn of `Agent.turn`, which routes it by its intent: a question is
answered, a change request is planned first and carried out. Slash commands are
handled here and never reach the model (`commands.py`, one table). On a terminal
the prompt is prompt_toolkit's (`prompt.py`: history, multi-line input,
completion, Tab for the mode) and the output rich's (`render.py`, `stream_view.py`);
Esc cancels a running turn (`keys.py`). Off a terminal it reads lines from stdin
and prints plain text, so it can be scripted.

prompt_toolkit and rich are imported only when the chat runs.
"""

from __future__ import annotations

import argparse
import sys

from deepseek_ls.cli.common import add_command, exit_with, resolve_context

MODES = ("plan", "agent", "yolo", "hetun")


def register(subparsers: argparse._SubParsersAction) -> None:
    chat = add_command(
        subparsers, "chat",
        help="interactive session in the terminal",
        description="A conversation with the agent. A question is answered; a change request is planned first,\n"
                    "then carried out with your approval (only planned in plan mode). /help lists the commands;\n"
                    "Tab cycles the mode, Esc cancels a running turn, @path attaches a file. See docs/chat.md.",
        handler=_chat,
    )
    chat.add_argument("--session", metavar="ID", help="continue this session first")
    chat.add_argument("--mode", choices=MODES, help="the mode to start in (default: agent_loop.mode); "
                      "yolo only in a trusted workspace")
    chat.add_argument("--tools", choices=("true", "false"), default="true",
                      help="false: every message is answered, nothing planned or changed (default true)")
    route = chat.add_mutually_exclusive_group()
    route.add_argument("--plan-only", action="store_true", help="every message is planned, nothing applied")
    route.add_argument("--force-execute", action="store_true",
                       help="every message runs the whole loop, even when it reads as a question")
    chat.add_argument("--show-reasoning", action="store_true", help="show the model's reasoning whole as it streams")
    chat.add_argument("--think", dest="force", action="store_const", const="max_think",
                      help="force the max-think profile for every call (/model changes it)")
    chat.add_argument("--fast", dest="force", action="store_const", const="fast",
                      help="force the fast profile for every call")


def _chat(args: argparse.Namespace) -> int:
    from deepseek_ls.agent.intent import TurnFlags
    from deepseek_ls.cli import interrupt
    from deepseek_ls.cli.agent_cmd import _agent
    from deepseek_ls.cli.chat.app import Chat
    from deepseek_ls.trust import yolo_refusal

    try:
        flags = TurnFlags(tools=args.tools == "true", plan_only=args.plan_only, force_execute=args.force_execute)
    except ValueError as exc:
        exit_with(str(exc), code=2)
    ctx = resolve_context(args)
    mode = args.mode or ctx.config.agent_loop.mode
    if mode == "yolo" and (refusal := yolo_refusal(ctx.root)):
        exit_with(refusal, code=2)
    chat = Chat(ctx, mode=mode, profile=args.force, flags=flags, show_reasoning=args.show_reasoning)

    async def go() -> None:
        agent = _agent(ctx, args, chat.ui)
        try:
            await chat.run(agent, resume=args.session)
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    interrupt.run(go)
    if not chat.tty:
        print(file=sys.stderr)
    return 0
