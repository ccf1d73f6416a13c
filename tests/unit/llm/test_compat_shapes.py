"""Answers shaped as real OpenAI-compatible servers send them, over real HTTP from the fake server."""

import json

import pytest

from deepseek_ls.config_models import Config
from deepseek_ls.llm import BadRequestError, ContextLengthError, LLMClient
from deepseek_ls.llm.assembly import StreamAssembler, completion_from_body

USER = [{"role": "user", "content": "read a.py"}]
TOOL = {"type": "function", "function": {"name": "fs_read", "parameters": {"type": "object"}}}
CALLS = [{"id": "c1", "name": "fs_read", "arguments": {"path": "a.py"}},
         {"id": "c2", "name": "fs_list", "arguments": {"path": "src"}}]


def local_client(fake, sink, **entry) -> LLMClient:
    """A client whose fast profile is a llama.cpp-style entry served by the fake."""
    values = {"preset": "llama-cpp", "id": "smollm2", "base_url": fake.base_url, **entry}
    llm = {"retry_base_seconds": 0.001, "retry_max_seconds": 0.05, "idle_timeout_seconds": 0.5, "max_retries": 2}
    config = Config.model_validate({"llm": llm, "models": {"local": values}})
    config.llm.profiles["fast"] = config.llm.profiles["fast"].model_copy(update={"model": "local"})
    return LLMClient(config.llm, sink=sink, env={"LLAMA_API_KEY": "test-key"})


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param({"repeat_tool_name": True}, id="llama-cpp-repeats-the-name-in-every-chunk"),
        pytest.param({"tool_index_base": 1}, id="odd-tool-call-indices"),
        pytest.param({"omit_tool_index": True}, id="continuations-without-index"),
        pytest.param({"empty_choices": True}, id="empty-choices-between-deltas"),
        pytest.param({"usage": "finish_chunk"}, id="usage-in-the-finish-chunk"),
        pytest.param({"usage": "nulls"}, id="usage-with-null-details"),
        pytest.param({"no_done": True}, id="no-done-after-finish"),
    ],
)
async def test_tool_calls_assemble_whatever_the_shape(fake_deepseek, client, shape):
    fake_deepseek.add({"tool_calls": CALLS, "chunk_chars": 3, "shape": shape})
    result = await client.complete(USER, role="executor", tools=[TOOL])
    assert [c.function.name for c in result.tool_calls] == ["fs_read", "fs_list"]
    assert [json.loads(c.function.arguments) for c in result.tool_calls] == [{"path": "a.py"}, {"path": "src"}]
    assert [c.id for c in result.tool_calls] == ["c1", "c2"]
    assert result.usage.prompt_tokens > 0 and not result.usage.estimated


async def test_reasoning_field_named_reasoning_is_read(fake_deepseek, client):
    fake_deepseek.add({"content": "4", "reasoning_content": "2+2", "shape": {"reasoning_field": "reasoning"},
                       "repeat": True})
    streamed = await client.complete(USER, role="ask")
    whole = await client.complete(USER, role="ask", stream=False)
    assert (streamed.reasoning_content, whole.reasoning_content) == ("2+2", "2+2")


async def test_missing_usage_is_estimated_and_marked(fake_deepseek, sink):
    fake_deepseek.add({"content": "hello there", "shape": {"usage": "none"}})
    async with local_client(fake_deepseek, sink) as llm:
        result = await llm.complete(USER, role="ask")
    assert result.usage.estimated and result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    kind, payload = sink.events[-1]
    assert payload["usage"]["estimated"] is True


async def test_local_entry_gets_only_what_it_takes(fake_deepseek, sink):
    fake_deepseek.add({"content": "ok"})
    async with local_client(fake_deepseek, sink) as llm:
        await llm.complete(USER, role="ask")
    body = fake_deepseek.requests[-1].body
    assert body["model"] == "smollm2" and body["max_tokens"] == 1024
    assert not {"thinking", "reasoning_effort", "stream_options"} & set(body)


async def test_unsupported_parameter_is_dropped_once_and_remembered(fake_deepseek, make_client, caplog):
    fake_deepseek.add({"content": "ok", "fault": {"reject_params": ["thinking"]}, "repeat": True})
    llm = make_client()
    first = await llm.complete(USER, role="ask")
    second = await llm.complete(USER, role="ask")
    assert (first.content, second.content) == ("ok", "ok")
    bodies = [r.body for r in fake_deepseek.requests]
    assert ["thinking" in b for b in bodies] == [True, False, False]  # rejected once, then never sent again
    assert "does not take 'thinking'" in caplog.text


async def test_a_400_for_something_else_is_not_retried(fake_deepseek, make_client):
    fake_deepseek.add({"fault": {"status": 400, "body": {"error": {"message": "messages: invalid role"}}}})
    with pytest.raises(BadRequestError):
        await make_client().complete(USER, role="ask")
    assert len(fake_deepseek.requests) == 1


async def test_empty_200_stream_is_a_context_length_error_not_retried(fake_deepseek, sink):
    fake_deepseek.add({"content": "never", "fault": {"empty_stream": True}, "repeat": True})
    async with local_client(fake_deepseek, sink) as llm:
        with pytest.raises(ContextLengthError, match="empty answer.*context window.*n_ctx"):
            await llm.complete(USER, role="ask")
    assert len(fake_deepseek.requests) == 1


async def test_base_url_without_v1_is_a_404_naming_the_url_and_the_fix(fake_deepseek, sink):
    fake_deepseek.add({"content": "unused"})
    async with local_client(fake_deepseek, sink, base_url=fake_deepseek.base_url + "/api") as llm:
        with pytest.raises(BadRequestError, match=r"/api/chat/completions answered 404.*set the base URL to .*/api/v1"):
            await llm.complete(USER, role="ask")


async def test_401_from_another_server_does_not_point_at_deepseek(fake_deepseek, sink):
    fake_deepseek.add({"fault": {"status": 401}})
    async with local_client(fake_deepseek, sink) as llm:
        with pytest.raises(Exception) as caught:
            await llm.complete(USER, role="ask")
    assert "platform.deepseek.com" not in caught.value.user_message
    assert fake_deepseek.base_url in caught.value.user_message


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([{"choices": None}, {"choices": [{"index": None, "delta": None}]}], id="null-choices-and-delta"),
        pytest.param([{"choices": [{"delta": {"content": "a"}}]}, {"usage": None, "choices": []}], id="usage-null"),
        pytest.param([{"choices": [{"delta": {"tool_calls": [{"index": None, "id": None,
                                                              "function": {"name": "x", "arguments": {"k": 1}}}]}}]}],
                     id="tool-call-nulls-and-object-arguments"),
    ],
)
def test_assembler_never_fails_on_nulls(chunks):
    assembler = StreamAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    result = assembler.result()
    assert all(call.id for call in result.tool_calls)


def test_body_with_null_usage_details_and_no_choices():
    body = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": None,
                                     "completion_tokens_details": None, "prompt_tokens_details": {"cached_tokens": 3}}}
    result = completion_from_body(body)
    assert (result.usage.prompt_tokens, result.usage.prompt_cache_hit_tokens, result.usage.cache_miss_tokens) == (5, 3, 2)


async def test_fallback_model_answers_when_the_model_is_out_of_capacity(fake_deepseek, make_client, caplog):
    fake_deepseek.add({"match": {"model": "deepseek-v4-flash"}, "fault": {"status": 503}, "repeat": True})
    fake_deepseek.add({"match": {"model": "deepseek-v4-pro"}, "content": "from the fallback"})
    llm = make_client()
    llm.config.profiles["fast"] = llm.config.profiles["fast"].model_copy(update={"fallback_model": "deepseek-v4-pro"})
    result = await llm.complete(USER, role="ask")
    assert result.content == "from the fallback"
    assert [r.body["model"] for r in fake_deepseek.requests] == ["deepseek-v4-flash"] * 3 + ["deepseek-v4-pro"]
    assert "trying the fallback model 'deepseek-v4-pro'" in caplog.text


async def test_no_fallback_for_a_request_the_server_refuses(fake_deepseek, make_client):
    fake_deepseek.add({"fault": {"status": 422}, "repeat": True})
    llm = make_client()
    llm.config.profiles["fast"] = llm.config.profiles["fast"].model_copy(update={"fallback_model": "deepseek-v4-pro"})
    with pytest.raises(BadRequestError):
        await llm.complete(USER, role="ask")
    assert {r.body["model"] for r in fake_deepseek.requests} == {"deepseek-v4-flash"}
