"""`deepseek-ls sessions --checkpoints | --rewind ID | --redo [REWIND_ID]`: rewind from the shell.

The prompts are listed as checkpoints (agent/rewind.py); a rewind is shown first (the prompts it
takes back, the files it may restore) and asked for on the terminal (or stdin), `--yes` skipping
the question. "no", an empty answer or no answer at all (end of input) rewinds nothing (exit 1).
A refusal (an edit made since overlaps) names the files and exits 1 with nothing changed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from deepseek_ls.cli.common import exit_with, print_json, resolve_context


def rewind_command(args: argparse.Namespace) -> int:
    from deepseek_ls.agent.assemble import build_agent
    from deepseek_ls.agent.rewind import Rewinder, RewindRefused
    from deepseek_ls.cli.terminal_ui import TerminalUI

    ctx = resolve_context(args)
    agent = build_agent(ctx.root, ctx.config, ui=TerminalUI(), loaded=ctx.loaded_config, state_dir=ctx.state_dir,
                        index=None, warn=lambda problem: print(f"deepseek-ls: {problem}", file=sys.stderr))
    if args.checkpoints:
        listed = agent.checkpoints()
        if args.json:
            print_json([c.to_json() for c in listed])
            return 0
        for c in listed:
            prompt = (c.prompt or "").replace("\n", " ")
            prompt = prompt if len(prompt) <= 60 else prompt[:57] + "..."
            flag = f"  [rewound: {c.rewound}]" if c.rewound else ""
            print(f"{c.session_id}  {c.created_at or '-':<27}  {prompt}{flag}")
            if c.files:
                print(f"    changed: {', '.join(c.files)}")
        if not listed:
            print("no prompts yet in this workspace", file=sys.stderr)
        return 0
    try:
        if args.redo is not None:
            result = asyncio.run(agent.redo_rewind(args.redo or None))
        else:
            rewinder = Rewinder(agent)
            sessions, ids = rewinder.scope(args.rewind, args.restore != "conversation")
            files = rewinder.covered(ids) if args.restore != "conversation" else []
            print(f"rewind {args.restore} to before the prompt of session {sessions[0]}: takes back "
                  f"{len(sessions)} prompt(s)" + (f"; restores {', '.join(files)} (edits made since are kept)"
                                                  if files else "; no file to restore"), file=sys.stderr)
            if not args.yes and not _confirmed():
                print("not rewound: nothing was changed", file=sys.stderr)
                return 1
            result = asyncio.run(agent.rewind(sessions[0], args.restore))
    except (RewindRefused, LookupError) as exc:
        exit_with(str(exc), code=1)
    if args.json:
        print_json(result.to_json())
        return 0
    done = "redone" if result.redone else "rewound"
    print(f"{done} {result.what} ({result.rewind_id}): " + (", ".join(result.files) or "no file changed"))
    if result.kept:
        print("changed after the prompts and left as they are: " + ", ".join(result.kept))
    if not result.redone:
        print(f"undo it with `deepseek-ls sessions --redo {result.rewind_id}`")
    return 0


def _confirmed() -> bool:
    print("Rewind? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")
