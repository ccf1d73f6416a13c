"""`deepseek-ls sessions` and `deepseek-ls replay ID --json`: views of the event store.

`replay` prints a session's projections rebuilt from its log. Deterministic
re-execution (tools and LLM answers taken from the log) belongs to the agent:
`--rerun` calls `deepseek_ls.cli.agent_cmd.rerun_replay(args, ctx) -> int`.
The `replay` subcommand is registered here only (argparse refuses a second one).
"""

from __future__ import annotations

import argparse
import sys

from deepseek_ls.cli.common import add_command, print_json, resolve_context, resolve_root
from deepseek_ls.store.projections import Projections, session_projection
from deepseek_ls.store.sessions import SessionStore


def register(subparsers: argparse._SubParsersAction) -> None:
    sessions = add_command(
        subparsers,
        "sessions",
        help="list this workspace's sessions",
        description=(
            "List the sessions recorded under .deepseek/sessions/ (newest first).\n"
            "The list comes from .deepseek/state.db, brought up to date from the event logs.\n"
            "Only sessions your deepseek-ls created in this workspace are listed (each has a\n"
            "session.seal made with your key, and its log is the one it wrote); others, such as\n"
            "ones a repository ships, are named on stderr and ignored. One you know to be yours\n"
            "(made before sessions were sealed, or before this project was moved) can be adopted\n"
            "with --adopt ID: it is shown, you confirm, and it is sealed as yours."
        ),
        handler=_sessions,
    )
    sessions.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild every projection in state.db from the event logs first",
    )
    sessions.add_argument(
        "--adopt",
        metavar="ID",
        help="vouch for an ignored session (a unique id prefix is enough): show it, ask, seal it as yours",
    )
    sessions.add_argument(
        "--yes",
        action="store_true",
        help="with --adopt or --rewind: do not ask (--adopt needs it when stdin is not a terminal)",
    )
    sessions.add_argument(
        "--checkpoints",
        action="store_true",
        help="list every prompt as a checkpoint: the files it changed, whether a rewind took it back",
    )
    sessions.add_argument(
        "--rewind",
        metavar="ID",
        help="take the workspace back to before this session's prompt (it and every later prompt): "
             "their applies and the changes of their commands, 3-way (edits made since are kept, or "
             "nothing changes and the files are named); asks first unless --yes",
    )
    sessions.add_argument(
        "--restore",
        choices=("code", "conversation", "both"),
        default="both",
        help="with --rewind: what goes back (default both; conversation: the prompts leave the "
             "conversation a chat or ACP client continues, the files stay)",
    )
    sessions.add_argument(
        "--redo",
        nargs="?",
        const="",
        metavar="REWIND_ID",
        help="undo a rewind (the latest one by default): its changes back 3-way, its prompts back",
    )
    replay = add_command(
        subparsers,
        "replay",
        help="show a session rebuilt from its event log",
        description=(
            "Rebuild one session's projections (transcript, plans and step statuses, patches and\n"
            "hunks, tool invocations, router decisions) from its events.jsonl and print them.\n"
            "With --rerun, re-execute the session deterministically from the log."
        ),
        handler=_replay,
    )
    replay.add_argument("session_id", help="the session (a unique prefix of its id is enough)")
    replay.add_argument(
        "--rerun",
        action="store_true",
        help="re-run the agent with tool results and LLM answers taken from the log",
    )


def _sessions(args: argparse.Namespace) -> int:
    from deepseek_ls.workspace import state_dir

    root = resolve_root(args)
    sd = state_dir(root, create=False)
    store = SessionStore(sd)
    if args.adopt:
        return _adopt(store, args)
    if args.checkpoints or args.rewind or args.redo is not None:
        from deepseek_ls.cli.rewind_cmd import rewind_command  # the agent is loaded only for these

        return rewind_command(args)
    if args.rebuild and store.sessions_dir.is_dir():
        with Projections(sd) as projections:
            projections.rebuild()
    summaries = store.list(warn=False)  # named just below
    if summaries:
        from deepseek_ls.llm.budget import price_sessions

        price_sessions(summaries, store.llm_calls(), _lazy_price_book(args))
    for planted in store.ignored():
        print(f"ignored session {planted.session_id}: not written by you: {planted.reason}.\n"
              f"    {planted.hint}", file=sys.stderr)
    if args.json:
        print_json(summaries)
        return 0
    if not summaries:
        print(f"no sessions yet in {sd}", file=sys.stderr)
        return 0
    for s in summaries:
        prompt = (s.prompt or "").replace("\n", " ")
        prompt = prompt if len(prompt) <= 60 else prompt[:57] + "..."
        flag = "  [log damaged: see `replay`]" if s.log_error else ""
        cost = f"  [{s.cost['text']}]" if s.cost and s.cost["calls"] else ""
        print(f"{s.session_id}  {s.created_at or '-':<27}  {s.mode or '-':<6} {s.state:<17} "
              f"{s.event_count:>6} events  {prompt}{cost}{flag}")
        if s.state in ("Failed", "Paused") and (s.error or s.state_reason):
            print(f"    {s.state.lower()}: {s.error or s.state_reason}")
    return 0


def _adopt(store: SessionStore, args: argparse.Namespace) -> int:
    """Show the session, ask (or take --yes), seal it as the person's, say where it was recorded."""
    found = store.adoptable(args.adopt)  # SessionNotFound / CannotAdopt: the CLI prints them
    prompt = (found.prompt or "").replace("\n", " ")
    print(f"session {found.session_id}\n"
          f"  created:   {found.created_at or '-'}\n"
          f"  workspace: {found.workspace_root or '-'}\n"
          f"  prompt:    {prompt[:200] or '-'}\n"
          f"  events:    {found.event_count}"
          + (f" (and a torn last line of {found.torn_bytes} bytes, left out)" if found.torn_bytes else "")
          + f"\n  ignored because: {found.reason}", file=sys.stderr)
    if not args.yes:
        if not sys.stdin.isatty():
            print("not adopted: confirm on a terminal, or pass --yes if you trust this session",
                  file=sys.stderr)
            return 2
        print("Adopt it as yours (it will be listed, replayed and resumed like your own)? [y/N] ",
              end="", file=sys.stderr, flush=True)
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            print("not adopted", file=sys.stderr)
            return 1
    audit = store.adopt(found)
    print(f"adopted session {found.session_id} (recorded in {audit})", file=sys.stderr)
    return 0


def _lazy_price_book(args: argparse.Namespace):
    """The config's price book, loaded (with the config: pydantic, the model registry) only when a
    listed session's model call is priced: a listing of sessions without calls starts as fast as
    `--help` (bench/bench_cli_startup.py). A bad config is then reported as by any command."""
    book = None

    def prices(model: str):
        nonlocal book
        if book is None:
            from deepseek_ls.llm.budget import price_book_for

            book = price_book_for(resolve_context(args, create_state=False).config)
        return book(model)

    return prices


def _replay(args: argparse.Namespace) -> int:
    ctx = resolve_context(args, create_state=False)
    if args.rerun:
        from deepseek_ls.cli.agent_cmd import rerun_replay  # the agent is loaded only for --rerun

        return int(rerun_replay(args, ctx) or 0)
    from deepseek_ls.llm.budget import ledger_from_events, price_book_for

    store = SessionStore(ctx.state_dir)
    session_id = store.resolve(args.session_id)
    projection = session_projection(ctx.state_dir, session_id)
    with store.open(session_id) as log:
        events = [(e.kind, e.payload) for e in log.read()]
    projection["cost"] = ledger_from_events(events, price_book_for(ctx.config)).summary()
    if args.json:
        print_json(projection)
        return 0
    _print_projection(projection)
    return 0


def _print_projection(p: dict) -> None:
    s = p["session"]
    print(f"session {s['session_id']}  mode={s['mode']}  state={s['state']}  events={s['event_count']}")
    if s.get("prompt"):
        print(f"prompt: {s['prompt']}")
    if s.get("log_error"):
        print(f"warning: {s['log_error']}")
    if s.get("error"):
        print(f"error: {s['error']}")
    turns = p["transcript"]
    if len(turns) > 20:
        print(f"  ... {len(turns) - 20} earlier turns (--json shows all)")
    for turn in turns[-20:]:
        text = (turn["content"] or "").strip().replace("\n", " ")
        print(f"  [{turn['seq_no']}] {turn['role']}: {text[:100]}")
    for plan in p["plans"]:
        print(f"plan {plan['plan_id']} v{plan['version']}: {plan.get('goal') or ''}")
        for step in plan["steps"]:
            print(f"  - [{step['status']}] {step['title'] or step['step_id']}")
    for patch in p["patches"]:
        print(f"patch {patch['patch_id']} ({patch['status']}): {', '.join(patch['files'])}")
    for d in p["router"]["decisions"]:
        print(f"router {d['unit']}: {d['profile']} (score {d['score']:.2f} / {d['threshold']:.2f})")
    print(f"cost: {p['cost']['session']['text']}")
    for step_id, spend in p["cost"]["steps"].items():
        print(f"  step {step_id}: {spend['text']}")
    print(f"tools: {len(p['tool_invocations'])}  llm calls: {len(p['llm_calls'])}  "
          f"verifications: {len(p['verifications'])}  (use --json for everything)")
