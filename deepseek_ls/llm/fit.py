"""Fit a request into the model's window: `context_window - max_tokens` for the prompt, or a clear error.

Callers may tag a message with ``"_fit": {"priority": N, "label": "repo map"}``
(stripped before sending). When the prompt is too long, the lowest priorities
are shortened first (head and tail kept, the middle replaced by a marker), in
order of priority then age; untagged messages get a priority from their place:

| message | priority | why |
|---|---|---|
| system messages, the last message | never shortened | the instructions and the request itself |
| tagged (repo map 10, index hits 20, file texts 40, ...) | as tagged | the caller knows what matters |
| tool results | 25 | the model can ask again |
| older turns | 30 | the newest turns matter most |

The model is told what was left out: a note is added to the last message. If
the prompt still does not fit, `ContextLengthError` names the window.

The report also says what fills the prompt (`parts`: instructions, plan,
context, conversation, tool results), counted as the request is: the context
meter shows these numbers, never a second estimate (`measure_messages` gives
them for a prompt before it is sent, to decide on compaction).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.llm.errors import ContextLengthError
from deepseek_ls.llm.tokens import MESSAGE_OVERHEAD, PromptCounter, message_text

FIT_KEY = "_fit"
NOTE_RESERVE = 160  # room kept for the markers and the note telling the model what was left out
MIN_KEEP_TOKENS = 64  # what a shortened message keeps at least, so the model sees what it was
SAFETY = 0.03  # share of the window kept free for the chat template and estimate error
MARKER = "\n[... {n} tokens of {label} left out to fit the model's context window ...]\n"


@dataclass
class FitReport:
    """What fitting did to one request (recorded in the `LLMCall@v1` event)."""

    budget: int
    prompt_tokens: int  # after fitting
    original_tokens: int
    exact: bool
    shortened: list[dict[str, Any]] = field(default_factory=list)  # [{label, from_tokens, to_tokens}]
    window: int = 0  # the model's context window
    parts: dict[str, int] = field(default_factory=dict)  # prompt tokens by what fills them (`PARTS`), after fitting

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "prompt_tokens": self.prompt_tokens, "original_tokens": self.original_tokens,
                "exact": self.exact, "shortened": self.shortened, "window": self.window, "parts": self.parts}


# What fills a prompt, as the context meter shows it.
PARTS = ("instructions", "plan", "context", "conversation", "tool_results")


def part_of(message: Mapping[str, Any]) -> str:
    """Which of `PARTS` a message is: system = instructions (AGENTS.md included), the tagged plan,
    other tagged context (repo map, files, index hits), tool results, and the conversation."""
    tag = message.get(FIT_KEY)
    if isinstance(tag, Mapping):
        part = tag.get("part") or ("plan" if tag.get("label") == "the plan" else "context")
        return part if part in PARTS else "context"
    role = message.get("role")
    if role == "system":
        return "instructions"
    return "tool_results" if role == "tool" else "conversation"


def _parts(messages: Sequence[Mapping[str, Any]], sizes: Sequence[int]) -> dict[str, int]:
    out = dict.fromkeys(PARTS, 0)
    for message, size in zip(messages, sizes):
        out[part_of(message)] += size
    return out


def message_sizes(messages: Sequence[Mapping[str, Any]], counter: PromptCounter, near: int) -> list[int]:
    return [counter.count(message_text(m), near=near) + MESSAGE_OVERHEAD for m in messages]


def measure_messages(messages: Sequence[Mapping[str, Any]], *, budget: int, counter: PromptCounter,
                     context_window: int) -> FitReport:
    """What `fit_messages` would count for `messages`, without shortening anything or raising."""
    sizes = message_sizes(messages, counter, budget)
    total = sum(sizes)
    return FitReport(budget=budget, prompt_tokens=total, original_tokens=total, exact=counter.exact,
                     window=context_window, parts=_parts(messages, sizes))


def prompt_budget(context_window: int, max_tokens: int, tools_tokens: int = 0) -> int:
    """Tokens the messages may use: the window less the output reserve, the tool schemas and a margin."""
    return context_window - max_tokens - tools_tokens - max(int(context_window * SAFETY), 16)


def strip_tags(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if k != FIT_KEY} for m in messages]


def _priority(message: Mapping[str, Any], index: int, last: int) -> tuple[int, str] | None:
    """(priority, label) or None when the message is never shortened."""
    tag = message.get(FIT_KEY)
    if isinstance(tag, Mapping):
        return int(tag.get("priority", 30)), str(tag.get("label", "context"))
    if message.get("role") == "system" or index == last:
        return None
    if message.get("role") == "tool":
        return 25, "a tool result"
    return 30, f"an earlier {message.get('role', 'message')} turn"


def _shorten(text: str, keep_tokens: int, total_tokens: int, label: str) -> str:
    """Head and tail of `text` keeping about `keep_tokens` of its `total_tokens`."""
    keep_chars = int(len(text) * keep_tokens / max(total_tokens, 1))
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    return text[:head] + MARKER.format(n=total_tokens - keep_tokens, label=label) + (text[-tail:] if tail else "")


def fit_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    budget: int,
    counter: PromptCounter,
    model: str,
    context_window: int,
    max_tokens: int,
) -> tuple[list[dict[str, Any]], FitReport]:
    """`messages` shortened to fit `budget` tokens (tags stripped), with a report; or `ContextLengthError`."""
    out = [dict(m) for m in messages]
    sizes = message_sizes(out, counter, budget)
    total = sum(sizes)
    report = FitReport(budget=budget, prompt_tokens=total, original_tokens=total, exact=counter.exact,
                       window=context_window)
    if total > budget:
        target = budget - NOTE_RESERVE
        last = len(out) - 1
        order = sorted(
            (p[0], i, p[1]) for i, m in enumerate(out)
            if (p := _priority(m, i, last)) is not None and isinstance(m.get("content"), str) and m["content"]
        )
        notes: list[str] = []
        for _, index, label in order:
            if total <= target:
                break
            message = out[index]
            size = sizes[index] - MESSAGE_OVERHEAD
            marker = counter.count(MARKER.format(n=size, label=label))
            keep = max(min(MIN_KEEP_TOKENS, size), size - (total - target) - marker)
            if keep >= size:
                continue
            message["content"] = _shorten(message["content"], keep, size, label)
            # Not counted again: the kept head and tail are `keep` tokens' worth of the text, plus the marker.
            new_size = keep + marker + MESSAGE_OVERHEAD
            total += new_size - sizes[index]
            sizes[index] = new_size
            report.shortened.append({"label": label, "from_tokens": size, "to_tokens": new_size - MESSAGE_OVERHEAD})
            notes.append(f"{label} (~{size - keep} of {size} tokens)")
        if notes:
            note = ("\n\n[Note: to fit this model's context window, parts were left out: "
                    + "; ".join(notes) + ". Ask for what you need with the tools if it matters.]")
            final = out[-1]
            if isinstance(final.get("content"), str):
                final["content"] += note
                added = counter.count(note)
                total += added
                sizes[-1] += added
        report.prompt_tokens = total
    report.parts = _parts(out, sizes)
    if total > budget:
        raise ContextLengthError(
            f"the request needs about {total} prompt tokens but {model} has a context window of "
            f"{context_window} tokens, {max_tokens} of them reserved for the answer (prompt budget {budget}); "
            "shorten the request, or use a model with a larger window (models.NAME.context_window)",
        )
    return strip_tags(out), report
