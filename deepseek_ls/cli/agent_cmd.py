"""`deepseek-ls plan|run|autopilot` and `replay --rerun`: the agent loop from the shell.

Exit codes: 0 completed (or paused waiting for you: the message says how to
continue), 1 the session failed, 2 usage errors, 3–10 LLM errors (see
docs/llm.md), 124 autopilot ran out of time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from deepseek_ls.cli.common import CliContext, add_command, exit_with, print_json, resolve_context
from deepseek_ls.cli.terminal_ui import TerminalUI, announce_retries
from deepseek_ls.store.ids import is_id


def register(subparsers: argparse._SubParsersAction) -> None:
    plan = add_command(
        subparsers, "plan",
        help="make a plan for a change (read-only; prints the plan)",
        description="Start a session in plan mode: the planner reads the workspace and prints a Plan.\n"
                    "Continue it with `deepseek-ls run --session ID`.",
        handler=_plan,
    )
    plan.add_argument("prompt", nargs="+", help="what you want changed")
    _model_flags(plan)

    run = add_command(
        subparsers, "run",
        help="run (or resume) a session's plan step by step",
        description="Run a new request end to end (plan, approve, apply, verify), or resume a session\n"
                    "exactly where it stopped (pending approvals included) with --session ID.",
        handler=_run,
    )
    run.add_argument("target", nargs="*", help="the request (or a full session id to resume)")
    run.add_argument("--session", metavar="ID", help="resume this session (a unique id prefix is enough)")
    run.add_argument("--mode", choices=["agent", "yolo", "hetun"], help="approval behaviour (default: agent_loop.mode); "
                     "hetun: research fan-out, one mission card to approve, then straight through")
    run.add_argument("--hetun", dest="mode", action="store_const", const="hetun", help="the same as --mode hetun")
    run.add_argument("--undo", action="store_true",
                     help="undo the Hetun mission of session ID (every apply since its checkpoint) on disk: edits "
                          "made since are kept (3-way); an overlap refuses it naming the files, nothing changed")
    _teammate_flag(run)
    _model_flags(run)

    autopilot = add_command(
        subparsers, "autopilot",
        help="plan, execute and verify without stopping for approvals (trusted repos)",
        description="Run the whole loop in yolo mode: patches and allowlisted commands are approved\n"
                    "automatically; policy still refuses anything outside the allowlist. Bounded by\n"
                    "--max-iterations, --max-minutes and the max-think budget.",
        handler=_autopilot,
    )
    autopilot.add_argument("prompt", nargs="+", help="what you want changed")
    autopilot.add_argument("--max-iterations", type=int, metavar="N", help="failed attempts before giving up")
    autopilot.add_argument("--max-minutes", type=float, metavar="M", help="wall-clock limit")
    _teammate_flag(autopilot)
    _model_flags(autopilot)


def _teammate_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--teammate-mode", dest="teammate_mode", action=argparse.BooleanOptionalAction, default=None,
                        help="run independent steps at once, each in its own git worktree, and stage their results "
                             "in step order (default: agent_loop.teammate_mode)")


def _model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--think", dest="force", action="store_const", const="max_think",
                        help="force the max-think profile for every call")
    parser.add_argument("--fast", dest="force", action="store_const", const="fast",
                        help="force the fast profile for every call")
    parser.add_argument("--stream", action="store_true", help="show the model's output on stderr as it arrives")


def _agent(ctx: CliContext, args: argparse.Namespace, ui: Any = None, *, read_only: bool = False):
    """The agent of a command (`agent.assemble.build_agent`): the workspace's index when built, its
    MCP servers, the terminal as its UI; `read_only` for commands that only read (review)."""
    from deepseek_ls.agent.assemble import build_agent

    ui = ui or TerminalUI(show_stream=getattr(args, "stream", False))
    announce_retries(ui._say)
    return build_agent(ctx.root, ctx.config, ui=ui, loaded=ctx.loaded_config, state_dir=ctx.state_dir,
                       read_only=read_only, warn=lambda problem: print(f"deepseek-ls: {problem}", file=sys.stderr))


class _Driven:
    """The session a command drives, once known (for the resume hint after an error or Ctrl-C)."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self.agent: Any = None

    def current(self) -> str | None:
        if self.session_id:
            return self.session_id
        if self.agent is not None and self.agent._runtimes:
            return next(reversed(self.agent._runtimes))
        return None

    def hint(self) -> str:
        sid = self.current()
        return f"; resume with: deepseek-ls run --session {sid[:13]}" if sid else ""


def _drive(coro_factory, driven: _Driven | None = None) -> Any:
    """Run the agent coroutine; LLM errors exit with their code and a one-line message.

    Ctrl-C stops the work (the session is paused) and says how to resume it.
    """
    from deepseek_ls.agent import AgentFailure, SessionCancelled
    from deepseek_ls.llm.errors import LLMError
    from deepseek_ls.trust import UntrustedWorkspace

    from deepseek_ls.cli import interrupt

    driven = driven or _Driven()
    try:
        return interrupt.run(coro_factory)  # asyncio.run, woken by a Ctrl-C whichever thread caught it
    except KeyboardInterrupt:
        print(f"\ndeepseek-ls: interrupted; the session is paused{driven.hint()}", file=sys.stderr)
        raise SystemExit(130) from None
    except LLMError as exc:
        hint = f" (the session failed{driven.hint()} once fixed)" if driven.current() else ""
        exit_with(f"{exc.user_message}{hint}", code=exc.exit_code)
    except SessionCancelled as exc:
        print(f"deepseek-ls: {exc}", file=sys.stderr)
        return None
    except AgentFailure as exc:
        exit_with(str(exc), code=1)
    except UntrustedWorkspace as exc:
        exit_with(exc, code=2)


# -- plan -------------------------------------------------------------------------


def _plan(args: argparse.Namespace) -> int:
    ctx = resolve_context(args)
    prompt = " ".join(args.prompt).strip()
    if not prompt:
        exit_with("the request is empty", code=2)

    driven = _Driven()

    async def go():
        agent = driven.agent = _agent(ctx, args)
        try:
            sid, plan = await agent.plan(prompt, mode="plan", profile=args.force)
            return sid, plan, agent.explain_routing(sid), agent.session_view(sid)
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    result = _drive(go, driven)
    if result is None:
        return 1
    sid, plan, why, view = result
    if args.json:
        print_json({"session_id": sid, "plan": plan.to_json(), "routing": why, "cost": view["cost"]})
        return 0
    print_plan(plan.to_json())
    print(f"\nrouting: {why['text']}")
    print(f"cost: {view['cost']['session']['text']}")
    print(f"session {sid} — run it with: deepseek-ls run --session {sid[:13]}", file=sys.stderr)
    return 0


def print_plan(plan: dict[str, Any]) -> None:
    print(f"Plan v{plan['version']}: {plan['goal']}  (confidence {plan.get('confidence', 0):.2f})")
    for i, step in enumerate(plan["steps"], start=1):
        files = ", ".join(step["files"]) or "-"
        print(f"  {i}. [{step['status']}] {step['title']}  ({step['intent']}; {files})")
    for label, key in (("assumptions", "assumptions"), ("verify", "verification"), ("risks", "risk_notes")):
        if plan.get(key):
            print(f"  {label}: " + "; ".join(plan[key]))


# -- run / autopilot ------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    ctx = resolve_context(args)
    session_id = args.session
    words = list(args.target)
    if not session_id and len(words) == 1 and is_id(words[0].lower()):
        session_id = words[0]
    if args.undo:
        if not session_id:
            exit_with("--undo needs the session: deepseek-ls run --undo --session ID", code=2)
        return _undo_mission(ctx, args, session_id)
    prompt = None if session_id else " ".join(words).strip()
    if not session_id and not prompt:
        exit_with("give a request, or --session ID to resume one", code=2)
    if not session_id:
        _refuse_untrusted_yolo(ctx, args.mode or ctx.config.agent_loop.mode)
    return _loop(ctx, args, prompt=prompt, session_id=session_id, mode=args.mode)


def _undo_mission(ctx: CliContext, args: argparse.Namespace, session_id: str) -> int:
    """`run --undo`: the mission's undo on disk (`PatchStore.undo_on_disk`), all or nothing."""
    from deepseek_ls.patch.model import PatchError

    async def go():
        agent = _agent(ctx, args)
        try:
            sid = agent.store.resolve(session_id)
            return (await agent.undo_mission(sid)).to_json()
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    try:
        result = _drive(go)
    except PatchError as exc:  # edits made after the mission overlap what it would restore
        exit_with(str(exc), code=1)
    except (LookupError, ValueError) as exc:  # no such session, no mission, already undone, another's apply
        exit_with(str(exc).strip("'\""), code=1)
    if args.json:
        print_json(result)
        return 0
    print(f"mission undone in {', '.join(result['restored']) or 'no file'}")
    if result["kept"]:
        print("kept as they are (changed after the mission, not by it): " + ", ".join(result["kept"]))
    return 0


def _refuse_untrusted_yolo(ctx: CliContext, mode: str | None) -> None:
    """Yolo (run --mode yolo, autopilot) only in a workspace the person trusted (`deepseek-ls trust`)."""
    from deepseek_ls.trust import yolo_refusal

    if mode == "yolo" and (refusal := yolo_refusal(ctx.root)):
        exit_with(refusal, code=2)


def _autopilot(args: argparse.Namespace) -> int:
    ctx = resolve_context(args)
    _refuse_untrusted_yolo(ctx, "yolo")
    if args.max_iterations is not None:
        ctx.config.agent_loop.max_iterations = args.max_iterations
    timeout = args.max_minutes * 60 if args.max_minutes else None
    return _loop(ctx, args, prompt=" ".join(args.prompt), mode="yolo", latency_mode="batch", timeout=timeout)


def _loop(ctx: CliContext, args: argparse.Namespace, *, prompt: str | None, session_id: str | None = None,
          mode: str | None = None, latency_mode: str | None = None, timeout: float | None = None) -> int:
    driven = _Driven(session_id)

    async def go():
        agent = driven.agent = _agent(ctx, args)
        try:
            task = asyncio.ensure_future(agent.run(prompt, session_id=session_id, mode=mode,
                                                   latency_mode=latency_mode, profile=args.force,
                                                   teammate_mode=getattr(args, "teammate_mode", None)))
            try:
                return await asyncio.wait_for(task, timeout)
            except asyncio.TimeoutError:
                sid = driven.current() or agent.store.list()[0].session_id
                return {**agent.session_view(sid), "timed_out": True}
        finally:
            await agent.aclose()
            await agent.llm.aclose()

    view = _drive(go, driven)
    if view is None:
        return 1
    if args.json:
        print_json(view)
    else:
        print_summary(view)
    if view.get("timed_out"):
        print(f"deepseek-ls: autopilot stopped: time limit reached; resume with run --session {view['session_id']}",
              file=sys.stderr)
        return 124
    return 1 if view["state"] == "Failed" else 0


def print_summary(view: dict[str, Any]) -> None:
    plan = view.get("plan")
    if plan:
        print_plan(plan)
    for p in view["patches"]:
        status = "applied" if p["applied"] else "rejected" if p["rejected"] else "pending"
        print(f"  patch {p['patch_id']} ({status}, {p['profile']}): {', '.join(p['files'])}")
    titles = {s["step_id"]: s["title"] for s in (plan or {}).get("steps", [])}
    for lane in (view.get("lanes") or {}).get("lanes", []):
        why = f" — {lane['reason']}" if lane.get("reason") else ""
        print(f"  lane {lane['lane']} ({lane['state']}): {titles.get(lane['step_id'], lane['step_id'])}{why}")
    line = f"session {view['session_id']}: {view['state']}"
    why = view.get("last_error") if view["state"] == "Failed" else view.get("state_reason")
    if view["state"] in ("Failed", "Paused") and why:
        line += f" — {why}"
    print(line)
    cost = (view.get("cost") or {}).get("session")
    if cost and cost.get("calls"):
        print(f"cost: {cost['text']} in {cost['calls']} model call(s)")
    if view["state"] in ("Paused", "Idle"):
        print(f"continue with: deepseek-ls run --session {view['session_id'][:13]}", file=sys.stderr)


# -- replay --rerun (registered by sessions_cmd) ----------------------------------------


def rerun_replay(args: argparse.Namespace, ctx: CliContext) -> int:
    """Re-execute a session deterministically from its log; exit 1 and name the first divergence if any."""
    from deepseek_ls.agent.replay import replay_session

    report = asyncio.run(replay_session(ctx.root, ctx.state_dir, ctx.config, args.session_id))
    if args.json:
        print_json(report.to_json())
    else:
        print(report.message)
    return 0 if report.ok else 1
