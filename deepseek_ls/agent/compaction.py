"""Compaction: older turns of a model conversation summarized, so a long session keeps fitting its window.

Before each model call (`SessionRuntime.complete`) the prompt is measured the way
the request will count it (`LLMClient.measure`, llm/fit.py). When it passes
`agent_loop.compact_threshold` of the window, or the person asked (`/compact`,
`deepseek.compact`), the turns between the pinned head and the newest
`agent_loop.compact_keep_turns` turns are summarized by the fast model into a
structured summary (decisions, files touched, open questions, plan state) that
takes their place:

- pinned, never summarized: the head of the conversation — the system prompt
  (instructions, AGENTS.md), the plan, the context and the request it started
  from. The head is byte for byte what it was, so the prompt cache keeps
  hitting on it (the stable prefix);
- tool results are dropped first: the summarizer sees that a tool ran and how
  big its result was, not the result (the model can ask again);
- an earlier summary is summarized again with the turns after it.

Recorded as `ContextCompacted@v1` (the summary, the span it replaced, tokens
before and after); the summarizer's call is an `LLMCall@v1` like any other, so
replay serves its answer from the recording and reaches the same prompt. An
answer that is not the structure (empty, not JSON, a 429 after the retries) is
said in one line and nothing is lost: the conversation goes on uncompacted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from deepseek_ls.agent.answer_json import json_in_answer
from deepseek_ls.agent.context_meter import tokens_text
from deepseek_ls.llm.errors import LLMError

ROLE = "compactor"
SUMMARY_LABEL = "the summary of earlier turns"
TOOL_ARGS_CHARS = 300  # of a tool call's arguments shown to the summarizer
TURN_CHARS = 4000  # of a turn's text shown to the summarizer

SYSTEM = """You compact the earlier turns of a coding agent's conversation so it can go on within its context window.
Answer with one JSON object and nothing else:
{"decisions": ["what was decided, and why, one line each"],
 "files_touched": ["path", "..."],
 "open_questions": ["what is still unknown or unresolved"],
 "plan_state": "which steps are done, which one is under way, what comes next"}
Keep names, paths, error messages and numbers exact. Tool results were left out: say what a tool was used for."""


class CompactionSummary(BaseModel):
    """The structured summary the fast model must answer with."""

    model_config = ConfigDict(extra="ignore")

    decisions: list[str]
    files_touched: list[str]
    open_questions: list[str]
    plan_state: str

    def empty(self) -> bool:
        return not (self.decisions or self.files_touched or self.open_questions or self.plan_state.strip())


class CompactionFailed(Exception):
    """The summarizer's answer could not be used; the message says why (the conversation is kept whole)."""


@dataclass(frozen=True)
class Span:
    """`messages[start:end]` is what a summary replaces."""

    start: int
    end: int


def _is_summary(message: Mapping[str, Any]) -> bool:
    tag = message.get("_fit")
    return isinstance(tag, Mapping) and tag.get("label") == SUMMARY_LABEL


def span_to_compact(messages: Sequence[Mapping[str, Any]], keep_turns: int) -> Span | None:
    """The older turns: from the first answer (or an earlier summary) to the newest `keep_turns`
    answers, cut at answers so a tool call is never parted from its result; None when too few."""
    head = next((i for i, m in enumerate(messages) if m.get("role") == "assistant" or _is_summary(m)), None)
    if head is None:
        return None
    answers = [i for i in range(head, len(messages)) if messages[i].get("role") == "assistant"]
    if len(answers) <= keep_turns:
        return None
    end = answers[-keep_turns] if keep_turns > 0 else len(messages) - 1
    return Span(head, end) if end - head >= 2 else None


def _render(message: Mapping[str, Any]) -> str:
    role = message.get("role", "?")
    if _is_summary(message):
        return f"EARLIER SUMMARY:\n{message.get('content', '')}"
    if role == "tool":  # dropped first: what ran and how much it said, not what it said
        return f"TOOL RESULT ({len(str(message.get('content') or ''))} characters, left out)"
    text = str(message.get("content") or "")
    if len(text) > TURN_CHARS:
        text = text[: TURN_CHARS // 2] + f"\n[... {len(text) - TURN_CHARS} characters ...]\n" + text[-TURN_CHARS // 2:]
    calls = [f"called {c.get('function', {}).get('name')}({str(c.get('function', {}).get('arguments', ''))[:TOOL_ARGS_CHARS]})"
             for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
    return "\n".join([f"{role.upper()}: {text}".rstrip(), *calls])


def summarizer_messages(older: Sequence[Mapping[str, Any]], focus: str | None) -> list[dict[str, Any]]:
    body = "\n\n".join(_render(m) for m in older)
    ask = "Summarize these earlier turns."
    if focus:
        ask += f" The person asks to keep in particular: {focus}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{body}\n\n{ask}"}]


def parse_summary(text: str | None) -> CompactionSummary:
    """The summary in the answer, or `CompactionFailed` saying what was wrong with it."""
    if not (text or "").strip():
        raise CompactionFailed("the summarizer answered nothing")
    try:
        summary = CompactionSummary.model_validate(json_in_answer(text or ""))
    except ValueError as exc:  # ValidationError is a ValueError
        reason = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3]) \
            if isinstance(exc, ValidationError) else str(exc)
        raise CompactionFailed(f"the summarizer's answer is not the summary asked for ({reason})") from None
    if summary.empty():
        raise CompactionFailed("the summarizer's summary is empty")
    return summary


def summary_message(summary: CompactionSummary, replaced: int) -> dict[str, Any]:
    def items(values: list[str]) -> str:
        return "\n".join(f"- {v}" for v in values) or "- (none)"

    text = (f"[Summary of {replaced} earlier messages of this conversation, compacted to fit the context window]\n"
            f"Decisions:\n{items(summary.decisions)}\n"
            f"Files touched: {', '.join(summary.files_touched) or '(none)'}\n"
            f"Open questions:\n{items(summary.open_questions)}\n"
            f"Plan state: {summary.plan_state or '(not said)'}")
    return {"role": "user", "content": text, "_fit": {"priority": 35, "label": SUMMARY_LABEL, "part": "conversation"}}


async def compact(rt: Any, messages: list[dict[str, Any]], *, profile: str, model: str | None,
                  tools: list[dict[str, Any]] | None, role: str) -> None:
    """Compact `messages` in place before `role`'s next call when over the threshold or asked for."""
    measure = getattr(rt.llm, "measure", None)
    if role == ROLE or role.startswith("hetun.") or measure is None:
        return
    recorded = getattr(rt.llm, "compaction_asked", None)  # replay: a compaction asked for live, here
    if rt.compact_request is None and recorded is not None:
        rt.compact_request = recorded()
    focus, asked = rt.compact_request, rt.compact_request is not None
    try:  # in a thread: counting a long prompt with a real tokenizer takes a while
        report = await asyncio.to_thread(measure, messages, profile=profile, model=model, tools=tools)
    except LLMError:
        return  # a missing key, an unknown model: the call itself says so
    if report is None or not report.window:
        if asked:
            rt.compact_request = None
            rt.ui.stream("status", "compaction: this model is not in the registry, so its window is unknown",
                         session_id=rt.session_id)
        return
    cfg = rt.config.agent_loop
    if not asked and (not cfg.auto_compact or report.prompt_tokens < cfg.compact_threshold * report.window):
        return
    rt.compact_request = None
    span = span_to_compact(messages, cfg.compact_keep_turns)
    if span is None:
        if asked:
            rt.ui.stream("status", "compaction: nothing older to summarize yet (the conversation is its pinned "
                         "start and its newest turns)", session_id=rt.session_id)
        return
    older = messages[span.start: span.end]
    hooks = getattr(getattr(rt.world, "tools", None), "hooks", None)  # None in a replay: no hook runs again
    if hooks is not None and hooks.any("PreCompact"):
        await hooks.fire("PreCompact", {"trigger": "manual" if asked else "auto", "custom_instructions": focus or ""},
                         emit=rt.session.emit, session_id=rt.session_id)
    try:
        answer = await rt.llm.complete(summarizer_messages(older, focus or None), role=ROLE, profile="fast",
                                       stream=False)
        summary = parse_summary(answer.content)
    except (LLMError, CompactionFailed) as exc:
        why = exc.user_message if isinstance(exc, LLMError) else str(exc)
        rt.ui.stream("status", f"compaction failed: {why}; the conversation is kept whole "
                     f"({tokens_text(report.prompt_tokens)} tokens of {tokens_text(report.window)})",
                     session_id=rt.session_id)
        return
    compacted = [*messages[: span.start], summary_message(summary, len(older)), *messages[span.end:]]
    after = await asyncio.to_thread(measure, compacted, profile=profile, model=model, tools=tools)
    rt.session.emit("ContextCompacted@v1", {
        "trigger": "manual" if asked else "auto",
        "focus": focus or None,
        "role": role,
        "summary": summary.model_dump(),
        "replaced": {"start": span.start, "end": span.end, "messages": len(older),
                     "roles": [m.get("role") for m in older],
                     "text": json.dumps(older, ensure_ascii=False, default=str)[:20_000]},
        "tokens_before": report.prompt_tokens,
        "tokens_after": after.prompt_tokens if after else None,
        "window": report.window,
    })
    messages[:] = compacted
    after_text = tokens_text(after.prompt_tokens) if after else "?"
    rt.ui.stream("status", f"compacted {tokens_text(report.prompt_tokens)} → {after_text} tokens "
                 f"({len(older)} earlier messages summarized; instructions, plan and request kept)",
                 session_id=rt.session_id)
