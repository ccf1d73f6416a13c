"""Every fault the fake can inject: the client's outcome and how many attempts it made.

The client is configured with max_retries=2, so an error that is retried until
the end shows 3 attempts; one that is not retried shows 1.
"""

import asyncio

import pytest

from deepseek_ls.llm import (
    AuthError,
    BadRequestError,
    BalanceError,
    InterruptedResponse,
    NetworkError,
    RateLimitError,
    ServerError,
)

USER = [{"role": "user", "content": "hi"}]
LONG = "one two three four five six seven eight nine ten"


@pytest.mark.parametrize(
    ("status", "error_type", "message_part"),
    [
        pytest.param(400, BadRequestError, "bad request", id="400"),
        pytest.param(401, AuthError, "DEEPSEEK_API_KEY is not set or invalid", id="401"),
        pytest.param(402, BalanceError, "insufficient balance", id="402"),
        pytest.param(422, BadRequestError, "invalid parameters", id="422"),
    ],
)
async def test_client_errors_are_typed_and_not_retried(fake_deepseek, client, status, error_type, message_part):
    fake_deepseek.add({"fault": {"status": status}, "repeat": True})
    with pytest.raises(error_type, match=message_part) as caught:
        await client.complete(USER, role="ask")
    assert caught.value.attempts == 1
    assert len(fake_deepseek.requests) == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_transient_status_is_retried_then_succeeds(fake_deepseek, client, sink, status):
    fake_deepseek.add({"fault": {"status": status}})
    fake_deepseek.add({"content": "recovered"})
    result = await client.complete(USER, role="ask")
    assert result.content == "recovered"
    assert result.retries == 1
    assert len(fake_deepseek.requests) == 2
    (retry_error,) = sink.events[-1][1]["retry_errors"]
    assert str(status) in retry_error


@pytest.mark.parametrize(("status", "error_type"), [(429, RateLimitError), (503, ServerError)])
async def test_transient_status_gives_up_after_the_retry_budget(fake_deepseek, client, status, error_type):
    fake_deepseek.add({"fault": {"status": status, "retry_after": 0.01}, "repeat": True})
    with pytest.raises(error_type) as caught:
        await client.complete(USER, role="ask")
    assert caught.value.attempts == 3
    assert len(fake_deepseek.requests) == 3


async def test_server_body_message_reaches_the_user(fake_deepseek, client):
    fake_deepseek.add({"fault": {"status": 400, "body": {"error": {"message": "max_tokens too large"}}}})
    with pytest.raises(BadRequestError, match="max_tokens too large"):
        await client.complete(USER, role="ask")


async def test_delay_before_first_byte_beyond_idle_timeout_is_a_retried_timeout(fake_deepseek, client):
    fake_deepseek.add({"content": "late", "fault": {"delay_before_first_byte": 1.0}})
    fake_deepseek.add({"content": "on time"})
    result = await client.complete(USER, role="ask")
    assert result.content == "on time"
    assert len(fake_deepseek.requests) == 2


async def test_keepalive_comments_before_data_are_ignored(fake_deepseek, client):
    fake_deepseek.add({"content": LONG, "fault": {"keepalives": 3, "keepalive_interval": 0.01}})
    result = await client.complete(USER, role="ask")
    assert result.content == LONG
    assert result.retries == 0


async def test_keepalives_alone_do_not_reset_the_idle_timeout(fake_deepseek, make_client):
    # keep-alives every 50 ms, idle timeout 300 ms: only data may move the deadline.
    fake_deepseek.add({"fault": {"keepalive_forever": True, "keepalive_interval": 0.05}, "repeat": True})
    llm = make_client(idle_timeout_seconds=0.3, max_retries=1)
    with pytest.raises(NetworkError, match="idle timeout") as caught:
        await llm.complete(USER, role="ask")
    assert caught.value.attempts == 2


async def test_stream_cut_after_data_is_an_interrupted_response_with_the_partial_answer(fake_deepseek, client, sink):
    fake_deepseek.add({"content": LONG, "chunk_chars": 4, "fault": {"cut_after_chunks": 4}})
    seen = []
    with pytest.raises(InterruptedResponse) as caught:
        await client.complete(USER, role="ask", on_delta=seen.append)
    partial = caught.value.partial
    assert partial.content == "one two thre"  # chunk 0 is the role chunk, then 3 text chunks
    assert "".join(d.text for d in seen) == partial.content
    assert caught.value.attempts == 1
    assert len(fake_deepseek.requests) == 1
    kind, payload = sink.events[-1]
    assert kind == "LLMCall@v1" and payload["error_kind"] == "interrupted"
    assert payload["response"]["content"] == "one two thre"


async def test_stream_cut_before_any_data_is_retried(fake_deepseek, client):
    fake_deepseek.add({"content": "lost", "fault": {"cut_after_chunks": 0}})
    fake_deepseek.add({"content": "second try"})
    result = await client.complete(USER, role="ask")
    assert (result.content, result.retries) == ("second try", 1)


async def test_malformed_json_after_data_interrupts(fake_deepseek, client):
    fake_deepseek.add({"content": LONG, "fault": {"malformed_at_chunk": 3}})
    with pytest.raises(InterruptedResponse, match="malformed JSON") as caught:
        await client.complete(USER, role="ask")
    assert caught.value.partial.content == LONG[:16]
    assert len(fake_deepseek.requests) == 1


async def test_malformed_first_chunk_is_a_retried_server_error(fake_deepseek, client):
    fake_deepseek.add({"content": "x", "fault": {"malformed_at_chunk": 0}, "repeat": True})
    with pytest.raises(ServerError, match="malformed JSON") as caught:
        await client.complete(USER, role="ask")
    assert caught.value.attempts == 3


async def test_dropped_connection_is_a_retried_network_error(fake_deepseek, client):
    fake_deepseek.add({"fault": {"drop_connection": True}})
    fake_deepseek.add({"content": "back"})
    result = await client.complete(USER, role="ask")
    assert (result.content, result.retries) == ("back", 1)


async def test_connection_refused_is_a_network_error_after_retries(monkeypatch, make_client):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
    monkeypatch.setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    with pytest.raises(NetworkError, match="cannot connect") as caught:
        await make_client().complete(USER, role="ask")
    assert caught.value.attempts == 3


async def test_missing_api_key_fails_before_any_request(fake_deepseek, monkeypatch, client):
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    fake_deepseek.add({"content": "never"})
    with pytest.raises(AuthError, match="DEEPSEEK_API_KEY is not set"):
        await client.complete(USER, role="ask")
    assert fake_deepseek.requests == []


async def test_unmatched_request_fails_fast_with_the_fakes_explanation(fake_deepseek, client):
    fake_deepseek.add({"match": {"role": "planner"}, "content": "plan"})
    with pytest.raises(ServerError, match="no scripted reply matched") as caught:
        await client.complete(USER, role="ask")
    assert caught.value.attempts == 1  # the fake says x-should-retry: false


async def test_cancelling_the_call_closes_the_stream(fake_deepseek, client, sink):
    fake_deepseek.add({"content": LONG * 20, "chunk_chars": 2, "chunk_delay": 0.02})
    started = asyncio.Event()
    task = asyncio.create_task(client.complete(USER, role="ask", on_delta=lambda d: started.set()))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = fake_deepseek.requests[0]
    # The server notices on its next write that the client went away, long before the answer's end.
    assert await asyncio.to_thread(record.finished.wait, 5)
    assert record.disconnected
    assert sink.events[-1][1]["error_kind"] == "cancelled"


async def test_non_streamed_answer_after_blank_line_keepalives(fake_deepseek, client):
    fake_deepseek.add({"content": "thought long", "fault": {"keepalives": 3, "keepalive_interval": 0.01}})
    result = await client.complete(USER, role="ask", stream=False)
    assert (result.content, result.retries) == ("thought long", 0)
