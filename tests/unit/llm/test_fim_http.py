"""The FIM client's own HTTP/1.1 connection (llm/fim_http.py) against the fake DeepSeek: one
kept-alive connection for call after call, a connection the server closed while idle replaced,
a cancelled call hung up (nothing billed), the server's errors and a refused connection typed as
with httpx, and a proxy named in the environment honoured (those calls go through httpx)."""

from __future__ import annotations

import asyncio

import pytest

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm.errors import LLMError, NetworkError
from deepseek_ls.llm.fim import FimClient, FimRequest
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

ENV = {"DEEPSEEK_API_KEY": "sk-fim-test"}


@pytest.fixture(scope="module")
def fake():
    with FakeDeepSeek() as server:
        yield server


@pytest.fixture
async def client(fake):
    fake.reset()
    fim = FimClient(LLMConfig(base_url=fake.base_url, idle_timeout_seconds=5, connect_timeout_seconds=2), env=ENV)
    yield fim
    await fim.aclose()


async def complete(fim: FimClient, prefix: str, **kwargs) -> str:
    answer = await fim.complete(fim.resolve("fast"), FimRequest(prefix, "\n", 16), timeout=10, **kwargs)
    return answer.text


async def test_calls_share_one_kept_alive_connection(fake, client):
    fake.add({"match": {"endpoint": "fim"}, "content": "x + 1", "repeat": True})
    assert await complete(client, "def inc(x):\n    return ") == "x + 1"
    kept = client._direct._idle
    assert kept is not None
    assert await complete(client, "def inc2(x):\n    return ") == "x + 1"
    assert client._direct._idle is kept
    sent = [r for r in fake.requests if r.endpoint == "fim"]
    assert [r.body["prompt"][-7:] for r in sent] == ["return ", "return "] and all(r.billed for r in sent)
    assert sent[0].headers["authorization"] == "Bearer sk-fim-test" and sent[0].role == "inline"


async def test_a_connection_the_server_closed_while_idle_is_not_reused(fake, client):
    fake.add({"match": {"endpoint": "fim"}, "content": "pass", "fault": {"close_after": True}})
    fake.add({"match": {"endpoint": "fim"}, "content": "pass"})
    assert await complete(client, "def a():\n    ") == "pass"
    kept = client._direct._idle
    assert kept is not None  # the answer said nothing of closing
    await asyncio.wait_for(_until(kept.reader.at_eof), 5)  # then the server closed it
    assert await complete(client, "def b():\n    ") == "pass"
    assert client._direct._idle is not kept and len(fake.requests) == 2  # a new connection, sent once


async def test_a_cancelled_call_hangs_up_and_nothing_is_billed(fake, client):
    fake.add({"match": {"endpoint": "fim"}, "content": "never seen", "fault": {"hold": "fim-cancel"}})
    call = asyncio.ensure_future(complete(client, "def held():\n    "))
    held = (await asyncio.to_thread(fake.wait_for_requests, 1))[-1]
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.to_thread(held.finished.wait, 5)
    assert held.disconnected and held.billed is None
    fake.release("fim-cancel")


async def test_a_server_error_is_typed_and_the_connection_kept_for_the_next_call(fake, client):
    fake.add({"match": {"endpoint": "fim"}, "fault": {"status": 503}})
    fake.add({"match": {"endpoint": "fim"}, "content": "ok"})
    with pytest.raises(LLMError) as raised:
        await complete(client, "def down():\n    ")
    assert "503" in raised.value.user_message or "unavailable" in raised.value.user_message.lower()
    assert await complete(client, "def up():\n    ") == "ok"


async def test_a_refused_connection_says_it_cannot_connect():
    with FakeDeepSeek() as gone:
        url = gone.base_url
    fim = FimClient(LLMConfig(base_url=url, connect_timeout_seconds=2), env=ENV)
    try:
        with pytest.raises(NetworkError) as raised:
            await complete(fim, "def x():\n    ")
        assert "cannot connect" in raised.value.user_message
    finally:
        await fim.aclose()


async def test_a_proxy_in_the_environment_is_used(fake, monkeypatch):
    fake.reset()
    with FakeDeepSeek() as gone:
        proxy = gone.base_url  # nothing listens there once closed
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    fim = FimClient(LLMConfig(base_url=fake.base_url, connect_timeout_seconds=2), env=ENV)
    try:
        with pytest.raises(NetworkError):
            await complete(fim, "def via_proxy():\n    ")
        assert fim._direct is None and fake.requests == []  # through httpx, to the (closed) proxy
    finally:
        await fim.aclose()


async def _until(done) -> None:
    while not done():
        await asyncio.sleep(0.01)
