"""The mission card: what an approved Hetun run will do, what it costs, how it is checked.

Built from the plan and the research (never from files read now, so replay
builds the same card): per file the steps that change it; estimated model
calls, tokens and money; expected outcomes and their verification; risks.
`render()` is the text the CLI prints and the editor's mission document shows.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.agent.plan import Plan
from deepseek_ls.llm.budget import Tokens, call_cost, money, price_book_for
from deepseek_ls.store.ids import new_id

# Per executor call: system prompt, repo map, plan and step (prompt) and a diff (output), in tokens.
PROMPT_OVERHEAD = 3_000
OUTPUT_PER_STEP = 800
UNSEEN_FILE_CHARS = 8_000
MISSION_TEXT_HEADING = "## Mission"


def build(plan: Plan, research: dict[str, Any], config: Any, *, version: int = 1, text: str | None = None,
          mission_id: str | None = None) -> dict[str, Any]:
    seen: dict[str, int] = research.get("seen_chars") or {}
    files: dict[str, list[str]] = {}
    tokens_in = 0
    for n, step in enumerate(plan.steps, start=1):
        for f in step.files:
            files.setdefault(f, []).append(f"step {n}: {step.title}")
        chars = sum(seen.get(f, UNSEEN_FILE_CHARS) for f in step.files)
        tokens_in += PROMPT_OVERHEAD + chars // 4
    calls = len(plan.steps)
    tokens_out = OUTPUT_PER_STEP * calls
    fast = config.llm.profiles["fast"].model
    cost = call_cost(Tokens(cache_miss=tokens_in, output=tokens_out), price_book_for(config)(fast))
    risks = list(plan.risk_notes)
    refuted = [f["text"] for n in research.get("nodes", []) for f in n.get("findings", [])
               if n.get("kind") == "crosscheck" and f.get("verdict") == "refuted"]
    risks += [f"research finding refuted on cross-check: {t}" for t in refuted]
    if research.get("budget_hit"):
        risks.append(research.get("message") or f"research stopped by the {research['budget_hit']} budget")
    verification = list(plan.verification) or ["derived from the project type (pytest, cargo test, npm test, ...)"]
    outcomes = [f"{s.title} ({', '.join(s.files) or 'no files'})" for s in plan.steps] or \
        [f"nothing to change: {plan.no_edit_reason or plan.goal}"]
    mission = {
        "mission_id": mission_id or new_id(),
        "version": version,
        "plan_id": plan.plan_id,
        "plan_version": plan.version,
        "goal": plan.goal,
        "files": [{"path": f, "actions": actions} for f, actions in files.items()],
        "estimate": {"model_calls": calls, "tokens": tokens_in + tokens_out,
                     "cost": round(cost, 6) if cost is not None else None, "model": fast},
        "outcomes": outcomes,
        "verification": verification,
        "risks": risks,
        "research": {k: research.get(k) for k in ("subqueries", "tokens", "cost", "stop_reason", "budget_hit", "message")},
    }
    mission["text"] = text if text is not None else default_text(mission)
    return mission


def default_text(mission: dict[str, Any]) -> str:
    """The editable mission description: the goal and, per file, what will be done."""
    lines = [f"Goal: {mission['goal']}"]
    lines += [f"- {f['path']}: {'; '.join(f['actions'])}" for f in mission["files"]]
    return "\n".join(lines)


def cost_text(estimate: dict[str, Any]) -> str:
    return money(estimate["cost"]) if estimate.get("cost") is not None else "unknown (no prices for " \
        f"{estimate.get('model')})"


def render(mission: dict[str, Any], session_id: str, *, decided: str | None = None) -> str:
    """The mission card as markdown (CLI prompt and the editor's mission document)."""
    est = mission["estimate"]
    research = mission.get("research") or {}
    out = [
        f"# Mission v{mission['version']}: {mission['goal']}",
        "",
        f"<!-- deepseek-ls mission document — session {session_id}, mission {mission['mission_id']}. "
        "Approve mission runs it straight through (checkpoint first: one undo reverts it all); "
        f"edit the text under '{MISSION_TEXT_HEADING}' and choose Modify… to re-plan; Reject runs nothing. -->",
        "",
    ]
    if decided:
        out += [f"Decision: {decided}", ""]
    out += [MISSION_TEXT_HEADING, mission["text"], "", "## Per file"]
    out += [f"- `{f['path']}`: {'; '.join(f['actions'])}" for f in mission["files"]] or ["- (no file changes)"]
    out += ["", "## Estimate",
            f"- model calls: {est['model_calls']} (fast executor; retries and fixes may add more)",
            f"- tokens: ~{est['tokens']}",
            f"- cost: ~{cost_text(est)}",
            "", "## Expected outcomes", *[f"- {o}" for o in mission["outcomes"]],
            "", "## Verification", *[f"- `{v}`" for v in mission["verification"]],
            "", "## Risks", *([f"- {r}" for r in mission["risks"]] or ["- none noted"]),
            "", "## Research",
            f"- {research.get('subqueries', 0)} sub-queries, {research.get('tokens', 0)} tokens"
            + (f", {money(research['cost'])}" if research.get("cost") is not None else "")
            + (f" — {research['message']}" if research.get("message") else "")]
    return "\n".join(out).rstrip() + "\n"


def read_text(document: str) -> str:
    """The mission text the person edited in the mission document (under `## Mission`)."""
    lines = document.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == MISSION_TEXT_HEADING) + 1
    except StopIteration:
        return ""
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip()
