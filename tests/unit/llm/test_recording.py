"""What `LLMCall@v1` records is enough to rebuild the answer or the error."""

import pytest

from deepseek_ls.llm import BalanceError, InterruptedResponse
from deepseek_ls.llm.assembly import completion_from_chunks
from deepseek_ls.llm.errors import error_from_record

USER = [{"role": "user", "content": "hi"}]
REPLY = {"content": "rebuilt from the log", "reasoning_content": "think", "chunk_chars": 3,
         "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "x.py"}}]}
FIELDS = {"content", "reasoning_content", "tool_calls", "finish_reason", "usage"}


@pytest.mark.parametrize("stream", [True, False])
async def test_recorded_chunks_rebuild_the_same_completion(fake_deepseek, client, sink, stream):
    fake_deepseek.add(REPLY)
    completion = await client.complete(USER, role="executor", stream=stream)
    payload = sink.events[-1][1]
    rebuilt = completion_from_chunks(payload["chunks"])
    assert rebuilt.model_dump(include=FIELDS) == completion.model_dump(include=FIELDS)


async def test_only_the_first_chunk_keeps_the_repeated_envelope(fake_deepseek, client, sink):
    fake_deepseek.add(REPLY)
    await client.complete(USER, role="executor")
    first, *rest = sink.events[-1][1]["chunks"]
    assert first["model"] == "deepseek-v4-flash" and "id" in first
    assert rest and all("id" not in c and "model" not in c for c in rest)


async def test_a_recorded_failure_becomes_the_same_typed_error(fake_deepseek, client, sink):
    fake_deepseek.add({"fault": {"status": 402}})
    with pytest.raises(BalanceError) as caught:
        await client.complete(USER, role="ask")
    again = error_from_record(sink.events[-1][1])
    assert type(again) is BalanceError and again.user_message == caught.value.user_message


async def test_a_recorded_interruption_carries_its_partial_answer(fake_deepseek, client, sink):
    fake_deepseek.add({"content": "partial answer here", "chunk_chars": 4, "fault": {"cut_after_chunks": 3}})
    with pytest.raises(InterruptedResponse):
        await client.complete(USER, role="ask")
    again = error_from_record(sink.events[-1][1])
    assert isinstance(again, InterruptedResponse) and again.partial.content == "partial "  # role chunk + 2 text chunks
