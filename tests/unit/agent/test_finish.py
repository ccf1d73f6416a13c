"""`complete_whole`: which finish reasons are continued, retried or stopped, and how pieces join."""

from __future__ import annotations

import pytest

from deepseek_ls.agent.finish import AnswerIncomplete, complete_whole
from deepseek_ls.llm.types import Completion, Usage


def answers(*items: tuple[str, str | None]):
    queue = [Completion(content=c, finish_reason=r, usage=Usage(total_tokens=10)) for c, r in items]
    sent: list[list[dict]] = []

    async def call(messages):
        sent.append(messages)
        return queue.pop(0)

    return call, sent


async def run(call, **kw):
    notices: list[tuple[str, dict]] = []
    result = await complete_whole(call, [{"role": "user", "content": "go"}], role="executor",
                                  max_continuations=kw.get("cont", 2), resource_retries=kw.get("retries", 1),
                                  backoff_seconds=0, notice=lambda a, p: notices.append((a, p)))
    return result, notices


async def test_continuation_drops_a_repeated_overlap_once():
    head = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old line\n+new li"
    call, sent = answers((head, "length"), ("@@ -1 +1 @@\n-old line\n+new line\n", "stop"))
    result, notices = await run(call)
    # "@@ -1 +1 @@\n-old line\n+new li" was repeated by the model: it is dropped, not doubled.
    assert result.content == head + "ne\n"
    assert result.finish_reason == "stop" and result.usage.total_tokens == 20
    assert [a for a, _ in notices] == ["continue"]


async def test_continuation_repeating_the_tail_is_joined_without_duplicate():
    call, _ = answers(("line one\nline two is long\nline thr", "length"), ("line two is long\nline three\n", "stop"))
    result, _ = await run(call)
    assert result.content == "line one\nline two is long\nline three\n"


@pytest.mark.parametrize("reason", ["content_filter", "something_new"])
async def test_never_return_an_answer_that_did_not_finish(reason):
    call, _ = answers(("partial", reason))
    with pytest.raises(AnswerIncomplete) as info:
        await run(call)
    assert info.value.finish_reason == reason


async def test_continuations_are_bounded():
    call, sent = answers(("a", "length"), ("b", "length"), ("c", "length"))
    with pytest.raises(AnswerIncomplete, match="after 2 continuation"):
        await run(call, cont=2)
    assert len(sent) == 3
