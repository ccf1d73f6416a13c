"""Every call is bounded: output cap, first-token timeout, total-time cap; no hang, no blind re-send."""

import pytest

from deepseek_ls.config_models import Config
from deepseek_ls.llm import CallTimeoutError, InterruptedResponse, LLMClient

USER = [{"role": "user", "content": "hi"}]


def client_with(fake, sink, llm_overrides=None, **entry) -> LLMClient:
    values = {"preset": "llama-cpp", "id": "smollm2", "base_url": fake.base_url, **entry}
    llm = {"retry_base_seconds": 0.001, "retry_max_seconds": 0.05, "idle_timeout_seconds": 0.5,
           "connect_timeout_seconds": 1.0, "max_retries": 3, **(llm_overrides or {})}
    config = Config.model_validate({"llm": llm, "models": {"local": values}})
    config.llm.profiles["fast"] = config.llm.profiles["fast"].model_copy(update={"model": "local"})
    return LLMClient(config.llm, sink=sink, env={"LLAMA_API_KEY": "test-key"})


async def test_every_call_carries_an_output_cap(fake_deepseek, client):
    fake_deepseek.add({"content": "ok"})
    await client.complete(USER, role="ask")
    assert fake_deepseek.requests[-1].body["max_tokens"] == Config().models["deepseek-v4-flash"].default_max_tokens


async def test_never_resend_after_a_first_token_timeout(fake_deepseek, sink):
    # The server thinks longer than the entry allows: one request, a clear error, no retries.
    fake_deepseek.add({"content": "late", "fault": {"delay_before_first_byte": 3.0}, "repeat": True})
    async with client_with(fake_deepseek, sink, first_token_timeout_seconds=0.3) as llm:
        with pytest.raises(CallTimeoutError, match="first-token timeout.*first_token_timeout_seconds") as caught:
            await llm.complete(USER, role="ask")
    assert caught.value.attempts == 1
    assert len(fake_deepseek.requests) <= 1  # (a loaded machine may not have read it yet)


async def test_first_token_timeout_covers_keepalives_before_data(fake_deepseek, sink):
    fake_deepseek.add({"fault": {"keepalive_forever": True, "keepalive_interval": 0.05}, "repeat": True})
    async with client_with(fake_deepseek, sink, first_token_timeout_seconds=0.3) as llm:
        with pytest.raises(CallTimeoutError) as caught:
            await llm.complete(USER, role="ask")
    assert caught.value.attempts == 1


async def test_total_cap_stops_a_looping_answer_with_the_partial_text(fake_deepseek, sink):
    # Data keeps flowing (the idle timeout never fires), the total cap still ends the call.
    # 400 chunks 50 ms apart take 20 s; the cap is 3 s (room for a loaded machine's first chunk).
    fake_deepseek.add({"content": "la " * 400, "chunk_chars": 3, "chunk_delay": 0.05})
    async with client_with(fake_deepseek, sink, total_timeout_seconds=3.0) as llm:
        with pytest.raises(InterruptedResponse, match="total-time cap") as caught:
            await llm.complete(USER, role="ask")
    assert caught.value.partial.content.startswith("la la")
    assert len(caught.value.partial.content) < 1200


async def test_total_cap_bounds_the_retries_too(fake_deepseek, sink):
    fake_deepseek.add({"fault": {"status": 503, "retry_after": 0.4}, "repeat": True})
    # The server asks for 0.4 s between attempts: the third attempt would start after the 0.5 s cap.
    async with client_with(fake_deepseek, sink, {"retry_max_seconds": 5.0}, total_timeout_seconds=0.5) as llm:
        with pytest.raises(CallTimeoutError, match="total-time cap"):
            await llm.complete(USER, role="ask")
    assert len(fake_deepseek.requests) <= 2
