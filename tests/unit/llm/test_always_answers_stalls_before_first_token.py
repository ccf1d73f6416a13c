"""A server that takes the request and then sends nothing (or only `: keep-alive` comments) ends the
call within the configured first-token timeout and retry budget, with a clear error.

Before, each attempt waited the idle timeout plus the connect timeout (130 s by default) and the
retries multiplied it: five attempts, about 11 minutes. Now every attempt's first-token wait is
`llm.first_token_timeout_seconds`, and all the attempts of one call share
`llm.retry_budget_seconds`. The deadlines here are tiny; what is asserted is the outcome (the
error's kind, how many attempts, nothing delivered), never how long it took. DeepSeek itself sends
keep-alives while a request waits to be scheduled, and reasoning streams as data: a long answer
that streams is never cut by the budget.
"""

from __future__ import annotations

import asyncio

import pytest

from deepseek_ls.llm.errors import CallTimeoutError, NetworkError, ServerError

HANG_GUARD = 30  # seconds: a call still running then is a hang (not a speed assertion)
USER = [{"role": "user", "content": "hi"}]

STALLS = [
    pytest.param({"keepalive_forever": True, "keepalive_interval": 0.02}, id="keepalives-forever"),
    pytest.param({"raw_events": [], "cut_after_chunks": 0, "cut_with": "stall"}, id="headers-then-silence"),
    pytest.param({"raw_events": [": keep-alive\n\n"], "cut_after_chunks": 1, "cut_with": "stall"},
                 id="one-keepalive-then-silence"),
    pytest.param({"delay_before_first_byte": 20.0}, id="no-headers-at-all"),
]


async def _ask(llm, seen):
    async with asyncio.timeout(HANG_GUARD):
        return await llm.complete(USER, role="ask", on_delta=seen.append)


@pytest.mark.parametrize("fault", STALLS)
async def test_always_answers_a_stall_before_the_first_token_within_the_retry_budget(
        fake_deepseek, make_client, sink, fault):
    fake_deepseek.add({"content": "never sent", "fault": fault, "repeat": True})
    # Ten retries allowed, no backoff: only the budget can stop them. Each attempt lasts at least its
    # 0.2 s first-token wait, so a 0.7 s budget leaves room for at most four.
    llm = make_client(first_token_timeout_seconds=0.2, retry_budget_seconds=0.7, max_retries=10,
                      retry_base_seconds=0.0, retry_max_seconds=0.0, idle_timeout_seconds=5.0)
    seen = []
    with pytest.raises(CallTimeoutError, match=r"retry budget of 0\.7s \(llm\.retry_budget_seconds\)") as caught:
        await _ask(llm, seen)
    error = caught.value
    assert error.kind == "timeout" and error.exit_code == 7
    assert "no data within 0.2s" in error.user_message and "llm.first_token_timeout_seconds" in error.user_message
    assert 1 <= error.attempts <= 4
    assert seen == []  # nothing reached the caller
    kind, payload = sink.events[-1]
    assert kind == "LLMCall@v1" and payload["error_kind"] == "timeout" and not payload["response"]


async def test_always_answers_a_stall_in_one_attempt_when_the_budget_is_shorter(fake_deepseek, make_client):
    fake_deepseek.add({"fault": {"keepalive_forever": True, "keepalive_interval": 0.02}, "repeat": True})
    llm = make_client(first_token_timeout_seconds=10.0, retry_budget_seconds=0.3, max_retries=4)
    with pytest.raises(CallTimeoutError, match="retry budget") as caught:
        await _ask(llm, [])
    assert caught.value.attempts == 1


async def test_retry_budget_keeps_the_kind_of_other_errors(fake_deepseek, make_client):
    # 503s asking for 0.4 s between attempts: the third would start after the 0.5 s budget.
    fake_deepseek.add({"fault": {"status": 503, "retry_after": 0.4}, "repeat": True})
    llm = make_client(retry_budget_seconds=0.5, retry_max_seconds=5.0, max_retries=10)
    with pytest.raises(ServerError, match="retry budget") as caught:
        await _ask(llm, [])
    assert caught.value.attempts <= 2
    assert len(fake_deepseek.requests) <= 2


async def test_an_attempt_cut_by_the_retry_budget_reports_the_error_before_it(fake_deepseek, make_client):
    # A 503 asking for 0.3 s, then a server that would answer only after 5 s: the budget (2 s) cuts
    # the second attempt short. What the user hears is the server's 503, not a stall of our own making.
    fake_deepseek.add({"fault": {"status": 503, "retry_after": 0.3}})
    fake_deepseek.add({"fault": {"status": 503, "delay_before_first_byte": 5.0}, "repeat": True})
    llm = make_client(retry_budget_seconds=2.0, retry_max_seconds=5.0, max_retries=10, idle_timeout_seconds=10.0)
    with pytest.raises(ServerError, match="retry budget") as caught:
        await _ask(llm, [])
    assert caught.value.attempts == 2
    assert caught.value.status == 503
    assert "before the retry budget ran out" not in caught.value.user_message
    assert not getattr(caught.value, "model_down", False)


async def test_a_first_attempt_cut_by_the_retry_budget_says_the_budget_ran_out(fake_deepseek, make_client):
    # No earlier error to report: the budget itself is the reason, named with its setting.
    fake_deepseek.add({"fault": {"status": 503, "delay_before_first_byte": 5.0}, "repeat": True})
    llm = make_client(retry_budget_seconds=0.3, max_retries=10, idle_timeout_seconds=10.0)
    with pytest.raises(CallTimeoutError, match=r"before the retry budget ran out.*llm\.retry_budget_seconds") as caught:
        await _ask(llm, [])
    assert caught.value.attempts == 1


async def test_long_reasoning_that_streams_is_not_cut_by_the_retry_budget(fake_deepseek, make_client):
    # Queued a while (keep-alives), then thinks aloud for longer than the whole budget: data keeps
    # the call alive; only the idle timeout (between data events) and the entry's total cap apply.
    # The budget only has to cover the first token (a fresh connection: slow on a loaded machine); the
    # stream lasts four times as long (80 chunks, 0.05 s apart).
    thought = "step " * 80
    fake_deepseek.add({"reasoning_content": thought, "content": "done", "chunk_chars": 5, "chunk_delay": 0.05,
                       "fault": {"keepalives": 3, "keepalive_interval": 0.02}})
    llm = make_client(first_token_timeout_seconds=2.0, retry_budget_seconds=1.0, idle_timeout_seconds=2.0)
    seen = []
    result = await _ask(llm, seen)
    assert (result.reasoning_content, result.content, result.finish_reason) == (thought, "done", "stop")
    assert result.retries == 0
    assert "".join(d.text for d in seen if d.kind == "reasoning") == thought


async def test_first_token_timeout_defaults_to_the_idle_timeout(fake_deepseek, make_client):
    fake_deepseek.add({"fault": {"keepalive_forever": True, "keepalive_interval": 0.02}, "repeat": True})
    llm = make_client(idle_timeout_seconds=0.2, retry_budget_seconds=30.0, max_retries=0)
    with pytest.raises(NetworkError, match=r"idle timeout, llm\.idle_timeout_seconds") as caught:
        await _ask(llm, [])
    assert caught.value.attempts == 1


async def test_a_model_that_stalls_past_the_budget_falls_back(fake_deepseek, make_client):
    fake_deepseek.add({"match": {"model": "deepseek-v4-flash"}, "repeat": True,
                       "fault": {"keepalive_forever": True, "keepalive_interval": 0.02}})
    fake_deepseek.add({"match": {"model": "deepseek-v4-pro"}, "content": "from the fallback"})
    llm = make_client(first_token_timeout_seconds=0.2, retry_budget_seconds=0.3, max_retries=4)
    llm.config.profiles["fast"] = llm.config.profiles["fast"].model_copy(update={"fallback_model": "deepseek-v4-pro"})
    result = await _ask(llm, [])
    assert result.content == "from the fallback"
    assert fake_deepseek.requests[-1].body["model"] == "deepseek-v4-pro"
