"""What compaction replaces (agent/compaction.py): never the pinned head, never a tool call without its result,
the newest turns kept; and which summarizer answers are a summary."""

import json

import pytest

from deepseek_ls.agent.compaction import CompactionFailed, parse_summary, span_to_compact, summary_message
from deepseek_ls.llm.fit import part_of

HEAD = [{"role": "system", "content": "rules + AGENTS.md"},
        {"role": "user", "content": "PLAN", "_fit": {"priority": 50, "label": "the plan"}},
        {"role": "user", "content": "Step 1"}]


def call(i: int) -> list[dict]:
    return [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "function": {"name": "fs_read"}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i}"}]


def test_the_span_starts_after_the_pinned_head_and_ends_at_an_answer():
    messages = HEAD + call(1) + call(2) + call(3)
    span = span_to_compact(messages, keep_turns=1)
    assert (span.start, span.end) == (3, 7)  # both older calls with their results; the newest kept
    assert messages[span.end]["role"] == "assistant"
    assert span_to_compact(messages, keep_turns=3) is None  # nothing older than what is kept
    assert span_to_compact(HEAD, keep_turns=0) is None  # the head alone: nothing to summarize


def test_an_earlier_summary_is_summarized_again_with_the_turns_after_it():
    summary = summary_message(parse_summary(json.dumps(
        {"decisions": ["d"], "files_touched": [], "open_questions": [], "plan_state": "s"})), 4)
    messages = HEAD + [summary] + call(4) + call(5)
    span = span_to_compact(messages, keep_turns=1)
    assert (span.start, span.end) == (3, 6)
    assert part_of(summary) == "conversation"


@pytest.mark.parametrize("answer, why", [
    ("", "answered nothing"),
    ("I read the files.", "not the summary"),
    ('{"decisions": "one"}', "not the summary"),
    ('{"decisions": [], "files_touched": [], "open_questions": [], "plan_state": " "}', "empty"),
])
def test_an_answer_that_is_not_the_structure_is_refused(answer, why):
    with pytest.raises(CompactionFailed, match=why):
        parse_summary(answer)


def test_a_fenced_summary_is_read():
    text = '```json\n{"decisions": ["x"], "files_touched": ["a.py"], "open_questions": [], "plan_state": "done"}\n```'
    assert parse_summary(text).files_touched == ["a.py"]
