"""The client against the fake server: streaming, recording, redaction, thinking-mode history."""

import json

import pytest

from deepseek_ls.config_models import LLMConfig, ModelProfile
from deepseek_ls.llm import LLMClient
from deepseek_ls.policy import redact as redaction

USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}


async def test_utf8_split_across_network_writes_is_reassembled(fake_deepseek, client):
    text = "héllo wörld — 你好, ünïcode ✓"
    fake_deepseek.add({"content": text, "reasoning_content": "思考中…", "chunk_chars": 3, "write_bytes": 1})
    result = await client.complete(USER, role="ask")
    assert result.content == text
    assert result.reasoning_content == "思考中…"


async def test_async_on_delta_receives_every_piece_in_order(fake_deepseek, client):
    fake_deepseek.add({"content": "abcdefghij", "reasoning_content": "xyz", "chunk_chars": 2})
    seen = []

    async def on_delta(delta):
        seen.append((delta.kind, delta.text))

    result = await client.complete(USER, role="ask", on_delta=on_delta)
    assert seen == [("reasoning", "xy"), ("reasoning", "z")] + [("content", p) for p in ["ab", "cd", "ef", "gh", "ij"]]
    assert result.ttft_ms is not None and result.total_ms >= result.ttft_ms


async def test_streamed_and_non_streamed_answers_are_the_same_completion(fake_deepseek, client):
    reply = {"content": "same answer", "reasoning_content": "why",
             "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "a.py"}}], "repeat": True}
    fake_deepseek.add(reply)
    streamed = await client.complete(USER, role="ask", tools=[TOOL], stream=True)
    whole = await client.complete(USER, role="ask", tools=[TOOL], stream=False)
    fields = ("content", "reasoning_content", "tool_calls", "finish_reason")
    assert streamed.model_dump(include=set(fields)) == whole.model_dump(include=set(fields))
    assert json.loads(streamed.tool_calls[0].function.arguments) == {"path": "a.py"}
    assert [r.body["stream"] for r in fake_deepseek.requests] == [True, False]


async def test_every_request_names_its_role_and_profile_parameters(fake_deepseek, make_client):
    llm = make_client()
    llm.config.profiles["max_think"] = ModelProfile(model="deepseek-v4-pro", thinking=True, reasoning_effort="high")
    fake_deepseek.add({"content": "ok", "repeat": True})
    await llm.complete(USER, role="planner", profile="max_think")
    await llm.complete(USER, role="router", model="deepseek-chat")
    first, second = fake_deepseek.requests
    assert (first.role, second.role) == ("planner", "router")
    assert first.body["thinking"] == {"type": "enabled"} and first.body["reasoning_effort"] == "high"
    assert first.body["model"] == "deepseek-v4-pro"
    assert second.body["model"] == "deepseek-chat" and "thinking" not in second.body
    assert first.headers["authorization"] == "Bearer test-key"


async def test_each_call_is_recorded_with_its_chunks_for_replay(fake_deepseek, client, sink):
    fake_deepseek.add({"content": "recorded", "chunk_chars": 3})
    result = await client.complete(USER, role="executor")
    kind, payload = sink.events[-1]
    assert kind == "LLMCall@v1"
    assert payload["role"] == "executor" and payload["profile"] == "fast"
    assert payload["response"]["content"] == "recorded"
    assert payload["usage"] == result.usage.model_dump(mode="json")
    # The raw chunks alone reproduce the answer.
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in payload["chunks"] if c["choices"])
    assert text == "recorded"
    assert len(payload["request_hash"]) == 64


async def test_request_hash_is_stable_for_the_same_request(fake_deepseek, client, sink):
    fake_deepseek.add({"content": "x", "repeat": True})
    await client.complete(USER, role="ask")
    await client.complete(USER, role="ask")
    await client.complete([{"role": "user", "content": "other"}], role="ask")
    hashes = [p["request_hash"] for _, p in sink.events]
    assert hashes[0] == hashes[1] != hashes[2]


async def test_policy_redaction_runs_on_every_body_before_it_leaves(fake_deepseek, client, monkeypatch):
    def redact_obj(obj):
        return json.loads(json.dumps(obj).replace("sk-SECRET", "[REDACTED]"))

    # Looked up at call time, so the policy layer's real function is used once it lands.
    monkeypatch.setattr(redaction, "redact_obj", redact_obj)
    fake_deepseek.add({"content": "ok"})
    await client.complete([{"role": "user", "content": "my key is sk-SECRET"}], role="ask")
    assert fake_deepseek.requests[0].body["messages"][0]["content"] == "my key is [REDACTED]"


async def test_a_redact_function_given_to_the_client_is_used(fake_deepseek, sink):
    fake_deepseek.add({"content": "ok"})
    seen = []
    async with LLMClient(LLMConfig(max_retries=0), sink=sink, redact=lambda body: seen.append(body) or body) as llm:
        await llm.complete(USER, role="ask")
    assert seen and seen[0]["messages"] == USER


async def test_thinking_mode_tool_conversation_is_accepted_by_the_api_rules(fake_deepseek, make_client):
    llm = make_client()
    llm.config.profiles["max_think"] = ModelProfile(model="deepseek-v4-pro", thinking=True)
    fake_deepseek.add({"reasoning_content": "I should read a.py", "content": "",
                       "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]})
    fake_deepseek.add({"match": {"last_role": "tool"}, "reasoning_content": "done", "content": "a.py says hi"})
    messages = [{"role": "user", "content": "what does a.py say?"}]
    first = await llm.complete(messages, role="executor", profile="max_think", tools=[TOOL])
    messages += [first.message(),
                 {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "print('hi')"}]
    second = await llm.complete(messages, role="executor", profile="max_think", tools=[TOOL])
    assert second.content == "a.py says hi"
    sent = fake_deepseek.requests[1].body["messages"]
    assert sent[1]["reasoning_content"] == "I should read a.py"


async def test_prompt_cache_hits_grow_when_a_conversation_extends(fake_deepseek, client):
    fake_deepseek.add({"content": "first answer"})
    fake_deepseek.add({"content": "second answer"})
    system = {"role": "system", "content": "You are a careful coding agent. " * 20}
    first = await client.complete([system, {"role": "user", "content": "q1"}], role="ask")
    second = await client.complete(
        [system, {"role": "user", "content": "q1"}, first.message(), {"role": "user", "content": "q2"}], role="ask"
    )
    assert first.usage.prompt_cache_hit_tokens == 0
    assert second.usage.prompt_cache_hit_tokens >= first.usage.prompt_tokens - 1
    assert second.usage.prompt_cache_miss_tokens == second.usage.prompt_tokens - second.usage.prompt_cache_hit_tokens


@pytest.mark.parametrize("stream", [True, False])
async def test_a_compatible_server_answering_json_to_a_stream_request_still_works(fake_deepseek, client, stream):
    # Some OpenAI-compatible servers ignore `stream`; the answer is read by its content type.
    fake_deepseek.add({"content": "json body", "ignore_stream": True})
    result = await client.complete(USER, role="ask", stream=stream)
    assert result.content == "json body"
