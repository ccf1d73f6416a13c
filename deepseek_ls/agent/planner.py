"""The planner: request → Plan (DraftPlan → GatherContext → FinalizePlan → EmitPlan).

Routed per call unit; may call read-only tools; may ask the user (at most
`max_ask_user_cycles` per turn). Invalid answers are re-asked once with the
parse error, then escalated once to max-think, then the session fails with
a readable reason. A valid plan with confidence below 0.5 made on the fast
profile is re-made once on max-think.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.agent import planner_prompts as prompts
from deepseek_ls.agent.plan import Plan
from deepseek_ls.agent.plan_parse import PlanParseError, parse_plan
from deepseek_ls.agent.runtime import MAX_TOOL_ROUNDS, AgentFailure, SessionRuntime
from deepseek_ls.router import RouterSignals

# A fast plan the planner itself doubts is re-done once on max-think.
LOW_CONFIDENCE = 0.5


class Planner:
    async def make_plan(
        self,
        rt: SessionRuntime,
        prompt: str,
        *,
        context: str | None = None,
        previous: Plan | None = None,
        feedback: str | None = None,
        step_title: str | None = None,
        unit: str = "planner",
    ) -> Plan:
        world = rt.world
        repo_map = await world.repo_map(prompt)
        hits, hit_files = await world.index_hits(prompt)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": rt.system_prompt(prompts.SYSTEM, skills=True)},
            {"role": "user", "content": prompts.REPO_MAP.format(repo_map=repo_map or "(empty)"),
             "_fit": {"priority": 10, "label": "the repo map"}},  # gives way first when over the window
            {"role": "user", "content": prompts.request_message(prompt, context, hits)},
        ]
        if previous is not None:
            messages.append({"role": "user", "content": prompts.revise_message(previous.to_json(), feedback or "", step_title)})
        session = rt.session
        decision = rt.router.decide(
            RouterSignals(
                prompt=prompt + ("\n" + feedback if feedback else ""),
                role="planner",
                files_touched=session.files_touched() or (len(previous.files) if previous else 0),
                index_hit_files=hit_files,
                failure_streak=session.failure_streak,
                verification_failures=session.verification_failures,
                planner_confidence=previous.confidence if previous else None,
                unresolved_questions=sum(1 for q in session.questions if q["answer"] is None),
                failure_class=session.last_failure_class if previous is not None else None,
                latency_mode=rt.latency_mode,  # type: ignore[arg-type]
                override=rt.override,  # type: ignore[arg-type]
            ),
            unit=unit,
        )
        tools = world.tool_schemas(read_only=True)
        reasked = False
        questions = 0
        rounds = 0
        while True:
            completion = await rt.complete(messages, decision, role="planner", tools=tools)
            if completion.tool_calls and rounds < MAX_TOOL_ROUNDS:
                rounds += 1
                await rt.run_tool_calls(completion, messages, tools)
                continue
            text = completion.content or ""
            question = _question(text)
            if question is not None:
                messages.append({"role": "assistant", "content": text})
                if questions >= rt.config.agent_loop.max_ask_user_cycles:
                    messages.append({"role": "user", "content": prompts.NO_MORE_QUESTIONS})
                    continue
                questions += 1
                answer = await rt.ask_user(question, "Planning")
                messages.append({"role": "user", "content": prompts.answer_message(question, answer)})
                continue
            try:
                plan = parse_plan(text)
                if plan.confidence < LOW_CONFIDENCE and plan.steps:
                    up = rt.router.escalate(decision, "LOW_CONFIDENCE_PLAN")
                    if up is not None:
                        decision = up
                        messages.append({"role": "assistant", "content": text})
                        messages.append({"role": "user", "content": prompts.low_confidence_message(plan.confidence)})
                        continue
            except PlanParseError as exc:
                messages.append({"role": "assistant", "content": text})
                messages.append({"role": "user", "content": prompts.reask_message(str(exc))})
                if not reasked:
                    reasked = True
                    continue
                escalated = rt.router.escalate(decision, "INVALID_PLAN")
                if escalated is None:
                    raise AgentFailure(f"the planner did not produce a valid plan: {exc}") from None
                decision = escalated
                continue
            return plan


def _question(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("ASK_USER|"):
            return line.partition("|")[2].strip() or None
    return None
