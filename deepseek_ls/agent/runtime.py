"""What one session needs while it runs: its view, router, classifier, verifier and the shared services.

Also the one place an LLM call is made, so every call is routed, streamed to
the UI and counted against the max-think budget the same way.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.agent.compaction import compact
from deepseek_ls.agent.failures import FailureClassifier
from deepseek_ls.agent.finish import AnswerIncomplete, complete_whole
from deepseek_ls.agent.instructions import ProjectInstructions
from deepseek_ls.agent.ledger import cap_reason
from deepseek_ls.agent.runaway import RunawayPaused
from deepseek_ls.agent.runaway import reason as runaway_reason
from deepseek_ls.agent.session import Session
from deepseek_ls.agent.verify import Verifier
from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config
from deepseek_ls.llm.capacity import CALL_WATCHER, CapacityLLM, Queued
from deepseek_ls.policy.approvals import Refused, ask_question
from deepseek_ls.policy.redact import redact_obj, redact_text
from deepseek_ls.router import Router, RouterDecision
from deepseek_ls.ui_port import ToolCallView, UIPort

MAX_TOOL_ROUNDS = 8


class SessionCancelled(Refused):
    """The person cancelled a clarifying question or left it unanswered: the session stopped without
    failing (it is paused by whoever catches it: `operations.settle_failure`)."""


class AgentFailure(Exception):
    """An unrecoverable failure; the message is what the person reads."""


class BudgetExceeded(Exception):
    """The session's cost reached `budget.max_cost`: it pauses (resumable once the budget is raised)."""

    exit_code = 1

    @property
    def user_message(self) -> str:
        return str(self)


def mode_config(config: Config, mode: str) -> Config:
    """The config a session of `mode` runs with: yolo approves patches and allowlisted commands itself."""
    if mode != "yolo":
        return config
    cfg = config.model_copy(deep=True)
    cfg.policy.approval_mode = cfg.policy.approve_edits = cfg.policy.approve_bash = "auto"  # type: ignore[assignment]
    return cfg


@dataclass
class SessionRuntime:
    session: Session
    router: Router
    classifier: FailureClassifier
    verifier: Verifier
    world: World
    llm: Any
    ui: UIPort
    config: Config
    latency_mode: str = "interactive"
    override: str | None = None
    instructions: ProjectInstructions | None = None
    # Teammate lanes (agent/lanes): on for this request, the runner (live or replayed), per-step state.
    teammate_mode: bool = False
    lanes: Any = None
    lane_failed: set[str] = field(default_factory=set)  # steps whose lane failed: they run in the workspace
    lane_feedback: dict[str, str] = field(default_factory=dict)  # why a lane result was not merged
    lane_notice_given: bool = False
    # A lane's link to the session it works for (agent/ledger.py): that session's caps stop the lane too.
    ledger_share: Any = None
    verify_advisory: bool = False  # a lane session: a failed verification is reported, not recovered from
    skills_catalog: str = ""  # the Agent Skills offered (SkillsOffered@v1), for the roles with tools
    compact_request: str | None = None  # "/compact [focus]": compact before the next call ("" = no focus)

    def system_prompt(self, base: str, *, skills: bool = False) -> str:
        """A role's system prompt followed by the project's instructions (AGENTS.md) and, for a role
        offered `skill.load` (`skills`), the skills' names and descriptions: the stable prefix."""
        text = self.instructions.system_prompt(base) if self.instructions is not None else base
        return f"{text.rstrip()}\n\n{self.skills_catalog}" if skills and self.skills_catalog else text

    @property
    def session_id(self) -> str:
        return self.session.session_id

    async def complete(
        self,
        messages: list[dict[str, Any]],
        decision: RouterDecision,
        *,
        role: str,
        tools: list[dict[str, Any]] | None = None,
        model: str | None = None,
        stream: bool | None = None,
    ):
        sid = self.session_id
        self.check_cost_budget()
        # Older turns summarized when the prompt passes the threshold or the person asked (agent/compaction.py).
        await compact(self, messages, profile=decision.profile, model=model, tools=tools or None, role=role)

        def on_delta(delta) -> None:
            channel = "reasoning" if delta.kind == "reasoning" else "content"
            self.ui.stream(channel, delta.text, session_id=sid)

        token = f"deepseek-{sid}-{role}"
        label = "max-think" if decision.profile == "max_think" else "fast"
        watcher = _ProgressWatcher(self.ui, token, role, f"{decision.model} ({label})")
        if isinstance(self.llm, CapacityLLM):
            watched = CALL_WATCHER.set(watcher)  # the model manager says "queued" or "asking"
        else:
            watched = None
            watcher.started(decision.model)
        extra: dict[str, Any] = {k: v for k, v in (("model", model), ("stream", stream)) if v is not None}

        async def call(msgs: list[dict[str, Any]]):
            return await self.llm.complete(msgs, role=role, profile=decision.profile, tools=tools or None,
                                           on_delta=on_delta, **extra)

        def notice(action: str, payload: dict[str, Any]) -> None:
            self.session.emit("FinishReasonHandled@v1", {**payload, "action": action})
            self.ui.stream("status", f"{role}: finish_reason={payload['finish_reason']}: {payload['detail']}", session_id=sid)

        loop_cfg = self.config.agent_loop
        # How the call's progress ends: "done" only for an answer; a failed or cancelled call
        # says so (the error itself reaches the person from the session that stops on it).
        outcome = "failed"
        try:
            completion = await complete_whole(
                call, messages, role=role, notice=notice,
                max_continuations=loop_cfg.max_continuations, resource_retries=loop_cfg.resource_retries,
                backoff_seconds=self.config.llm.retry_base_seconds,
            )
            outcome = "done"
        except AnswerIncomplete as exc:
            raise AgentFailure(str(exc)) from exc
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            if watched is not None:
                CALL_WATCHER.reset(watched)
            self.ui.progress(token, f"{role}: {outcome}", done=True)
        self.router.record_usage(
            decision.profile, completion.usage.total_tokens, (completion.total_ms or 0.0) / 1000.0
        )
        self.session.emit(
            "TurnAdded@v1",
            {
                "role": "assistant",
                "content": completion.content,
                "reasoning_content": completion.reasoning_content,
                "tool_calls": [c.model_dump() for c in completion.tool_calls],
                "agent_role": role,
                "decision_id": decision.decision_id,
            },
        )
        if completion.tool_calls:
            self.check_runaway()  # before running the same call yet again
        return completion

    def check_cost_budget(self) -> None:
        """Before each call: a session whose known cost reached `budget.max_cost`, or whose tokens reached
        `budget.max_tokens`, spends nothing more. A teammate lane checks the session it works for (every
        lane's calls counted: agent/ledger.py) before its own."""
        if self.ledger_share is not None and (why := self.ledger_share.over(self)) is not None:
            raise BudgetExceeded(why)
        why = cap_reason(self.session.costs.total(), self.config.budget, self.session_id)
        if why is not None:
            raise BudgetExceeded(why)

    def check_runaway(self) -> None:
        """The same tool call, failing edit or verification failure `agent_loop.runaway_repeats` times
        in a row: record it and pause (`RunawayPaused`); the record resets the count for the resume."""
        limit = self.config.agent_loop.runaway_repeats
        tripped = self.session.runaway.tripped(limit)
        if tripped is None:
            return
        name, streak = tripped
        message = runaway_reason(streak, limit)
        self.session.emit("RunawayDetected@v1", {"streak": name, "count": streak.count, "limit": limit,
                                                 "what": streak.what})
        raise RunawayPaused(message)

    def check_failure_budget(self) -> None:
        """Every classified failure counts; when `agent_loop.max_iterations` are spent, stop and say why.
        Within the budget, a failure the model made the same way `runaway_repeats` times in a row pauses."""
        limit = self.config.agent_loop.max_iterations
        if self.session.failures >= limit:
            raise AgentFailure(
                f"stopped after {self.session.failures} failed attempts (agent_loop.max_iterations = {limit}); "
                f"last failure: {self.session.last_error}"
            )
        self.check_runaway()

    async def run_tool_calls(self, completion, messages: list[dict[str, Any]], offered: list[dict[str, Any]]) -> None:
        """Execute the model's tool calls and append their results to `messages`.

        Only tools that were offered run: while planning that is the read-only set, whatever the model asks.
        """
        allowed = {t.get("function", {}).get("name") for t in offered}
        messages.append(completion.message())
        for call in completion.tool_calls:
            if call.function.name not in allowed:
                result = {"ok": False, "error": f"{call.function.name} is not available here; "
                                                f"available: {', '.join(sorted(n for n in allowed if n))}"}
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
                continue
            arguments: Any = {}
            try:
                arguments = json.loads(call.function.arguments or "{}")
                if not isinstance(arguments, dict):
                    raise ValueError("arguments must be a JSON object")
            except ValueError as exc:
                result = {"ok": False, "error": f"invalid JSON arguments: {exc}"}
            else:
                result = await self.world.call_tool(call.function.name, arguments)
            if isinstance(self.ui, ToolCallView):
                shown = redact_text(tool_summary(arguments if isinstance(arguments, dict) else {}))
                self.ui.tool_called(call.function.name, shown, bool(result.get("ok", True)), session_id=self.session_id)
            messages.append(
                # Redacted while still structured: in the encoded JSON `\"` and `\n` hide secrets' edges.
                {"role": "tool", "tool_call_id": call.id,
                 "content": json.dumps(redact_obj(result), ensure_ascii=False, default=str)[:20000]}
            )

    async def ask_user(self, question: str, resume_state: str) -> str:
        """AwaitingUserInput round trip, bounded by `policy.approval_timeout_seconds`; a cancel or no
        answer raises `SessionCancelled` (the session is then paused, the question recorded)."""
        session = self.session
        session.machine.to("AwaitingUserInput", "the model asked a question")
        session.emit("UserQuestionAsked@v1", {"question": question, "choices": None})
        timeout = self.config.policy.approval_timeout_seconds
        answer, refusal = await ask_question(self.ui, question, None, timeout)
        if refusal is not None:
            session.emit("UserQuestionAnswered@v1", {"answer": None, "cancelled": True,
                                                     **({"timed_out": True} if refusal == "timeout" else {})})
            raise SessionCancelled("ask_user", refusal, f"the question {question[:200]!r}",
                                   f"no answer within {timeout:g} s" if refusal == "timeout" else "")
        session.emit("UserQuestionAnswered@v1", {"answer": answer, "cancelled": False})
        session.machine.to(resume_state, "the user answered")
        return answer


def tool_summary(arguments: dict[str, Any], width: int = 60) -> str:
    """A tool call's arguments in a few characters: the string ones, space separated (a path, a query)."""
    text = " ".join(str(v) for v in arguments.values() if isinstance(v, (str, int)) and not isinstance(v, bool))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class _ProgressWatcher:
    """One call's progress: "queued for MODEL: why" while the model manager holds it back,
    "asking MODEL (fast|max-think)" once it goes to the server (said again only after a wait)."""

    def __init__(self, ui: UIPort, token: str, role: str, asking: str) -> None:
        self.ui, self.token, self.role, self.asking = ui, token, role, asking
        self.last = ""

    def _say(self, message: str) -> None:
        if message != self.last:
            self.last = message
            self.ui.progress(self.token, message)

    def queued(self, wait: Queued) -> None:
        self._say(f"{self.role}: queued for {wait.model}: {wait.describe()}")

    def started(self, model: str) -> None:
        self._say(f"{self.role}: asking {self.asking}")


def build_runtime(session: Session, world: World, cfg: Config, llm: Any, ui: UIPort) -> SessionRuntime:
    """A runtime around `world`: the live agent passes the real one, replay a recorded one."""
    loop_cfg = cfg.agent_loop
    return SessionRuntime(
        session=session,
        router=Router(cfg.router, cfg.llm.profiles, sink=session),
        classifier=FailureClassifier(loop_cfg.failure_classifier, session),
        verifier=Verifier(world, session, timeout=loop_cfg.verify_timeout_seconds,
                          fingerprint_lines=loop_cfg.failure_classifier.fingerprint_lines),
        world=world,
        llm=llm,
        ui=ui,
        config=cfg,
        latency_mode=cfg.router.latency_mode,
        instructions=ProjectInstructions(world.root, cfg),
    )
