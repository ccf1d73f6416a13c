"""Hostile and broken model answers, through the real client and the fake server over real HTTP.

Whatever a server streams, a call ends: with a whole `Completion`, or with a typed `LLMError`
whose one-line message says what happened (`InterruptedResponse` once data has flowed, so the
caller never takes a truncated answer for a whole one). Never another exception, never a hang,
never an answer that keeps growing in memory.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from deepseek_ls.config_models import ModelProfile
from deepseek_ls.llm.errors import InterruptedResponse, LLMError, NetworkError, RateLimitError, ServerError

HANG_GUARD = 30  # seconds: a call still running then is a hang (not a speed assertion)


def data(obj) -> str:
    return "data: " + json.dumps(obj, ensure_ascii=False) + "\n\n"


def delta(d, finish=None) -> str:
    return data({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


def text(t: str) -> str:
    return delta({"content": t})


def call(index, *, id=None, name=None, arguments="") -> str:
    function = {"arguments": arguments} if name is None else {"name": name, "arguments": arguments}
    part = {"function": function} if index is None else {"index": index, "function": function}
    if id is not None:
        part.update(id=id, type="function")
    return delta({"tool_calls": [part]})


FINISH = delta({}, "stop")
TOOL_FINISH = delta({}, "tool_calls")
DONE = "data: [DONE]\n\n"
USAGE = data({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}})


def usage(**fields) -> str:
    return data({"choices": [], "usage": fields})


async def ask(client, **kwargs):
    async with asyncio.timeout(HANG_GUARD):
        return await client.complete([{"role": "user", "content": "hi"}], role="ask", **kwargs)


# -- answers that are whole, however odd their stream ----------------------------------------------

@pytest.mark.parametrize("events, content", [
    pytest.param([text("hel"), text("lo"), FINISH, DONE, DONE], "hello", id="done-twice"),
    pytest.param([text("hel"), text("lo"), FINISH, DONE, text(" EXTRA"), FINISH, DONE], "hello", id="data-after-done"),
    pytest.param([text("hel"), text("lo"), FINISH, ": keep-alive\n\n", USAGE, DONE], "hello",
                 id="keepalive-between-finish-and-usage"),
    pytest.param([text("h\u00e9")[:9], text("h\u00e9")[9:-1], "\n", FINISH, DONE], "h\u00e9",
                 id="one-event-split-across-writes"),
])
async def test_always_answers_whole_when_the_stream_is_odd_but_complete(fake_deepseek, client, events, content):
    fake_deepseek.add({"fault": {"raw_events": events}})
    completion = await ask(client)
    assert completion.content == content
    assert completion.finish_reason == "stop"


@pytest.mark.parametrize("cut_with", ["close", "stall", "keepalives"])
async def test_always_answers_when_the_stream_breaks_after_the_finish_chunk(fake_deepseek, client, cut_with):
    # The model said it was done; only the usage chunk and [DONE] were lost: the answer is whole.
    fake_deepseek.add({"fault": {"raw_events": [text("hello"), FINISH], "cut_after_chunks": 2, "cut_with": cut_with}})
    completion = await ask(client)
    assert (completion.content, completion.finish_reason) == ("hello", "stop")
    assert completion.usage.estimated and completion.usage.completion_tokens > 0


@pytest.mark.parametrize("fields, expected", [
    pytest.param({"prompt_tokens": -50, "completion_tokens": -3, "total_tokens": -53,
                  "prompt_cache_miss_tokens": -50}, None, id="negative-counted-here-instead"),
    pytest.param({"prompt_tokens": "lots", "completion_tokens": 2, "total_tokens": None}, (0, 2, 0, 0), id="not-a-number"),
    pytest.param({"prompt_tokens": 12.0, "completion_tokens": 2.5, "prompt_cache_hit_tokens": True}, (12, 2, 0, 0),
                 id="floats-and-bools"),
    pytest.param({"prompt_tokens": 9, "completion_tokens": 2, "completion_tokens_details": {"reasoning_tokens": "x"}},
                 (9, 2, 0, 0), id="garbage-reasoning-tokens"),
])
async def test_always_answers_whatever_the_usage_says(fake_deepseek, client, fields, expected):
    fake_deepseek.add({"fault": {"raw_events": [text("hi"), FINISH, usage(**fields), DONE]}})
    completion = await ask(client)
    assert completion.content == "hi"
    u = completion.usage
    if expected is None:  # nothing usable reported: counted locally, and said so
        assert u.estimated and u.prompt_tokens > 0
    else:
        assert (u.prompt_tokens, u.completion_tokens, u.prompt_cache_hit_tokens, u.reasoning_tokens) == expected
    assert min(u.prompt_tokens, u.completion_tokens, u.total_tokens, u.prompt_cache_hit_tokens,
               u.prompt_cache_miss_tokens, u.cache_miss_tokens) >= 0


@pytest.mark.parametrize("events, check", [
    pytest.param([call(0, id="a", name="fs_read", arguments='{"path": "caf'), call(0, arguments='\\u00'),
                  call(0, arguments='e9.txt"}'), TOOL_FINISH, DONE],
                 lambda calls: json.loads(calls[0].function.arguments) == {"path": "caf\u00e9.txt"},
                 id="arguments-split-inside-a-unicode-escape"),
    pytest.param([call(0, id="a", name="fs_read", arguments='{"path": '), call(0, arguments='"x.py"}'),
                  call(0, id="b", name="fs_read", arguments='{"path": '), call(0, arguments='"y.py"}'), TOOL_FINISH, DONE],
                 lambda calls: [(c.id, json.loads(c.function.arguments)["path"]) for c in calls]
                 == [("a", "x.py"), ("b", "y.py")], id="every-call-under-index-0"),
    pytest.param([call(0, id="a", name="fs_read", arguments='{"path": "x.py"}'),
                  call(0, id="a", name="fs_read", arguments=""), TOOL_FINISH, DONE],
                 lambda calls: len(calls) == 1 and json.loads(calls[0].function.arguments) == {"path": "x.py"},
                 id="same-id-repeated"),
    pytest.param([call(None, name="fs_read", arguments='{"path": "x.py"}'),
                  call(None, id="b", name="fs_read", arguments='{"path": "y.py"}'), TOOL_FINISH, DONE],
                 lambda calls: [c.id for c in calls] == ["call_0", "b"], id="no-index-first-without-id"),
    pytest.param([call(0, id=7, name="fs_read", arguments="{}"), TOOL_FINISH, DONE],
                 lambda calls: calls[0].id == "7", id="numeric-id-becomes-text"),
    pytest.param([text("I will read it."), call(0, id="a", name="fs_read", arguments="{}"), TOOL_FINISH, DONE],
                 lambda calls: [c.function.name for c in calls] == ["fs_read"], id="content-and-tool-calls"),
    pytest.param([call(i, id=f"c{i}", name="fs_read", arguments=json.dumps({"path": f"f{i}"})) for i in range(200)]
                 + [TOOL_FINISH, DONE],
                 lambda calls: [json.loads(c.function.arguments)["path"] for c in calls] == [f"f{i}" for i in range(200)],
                 id="200-tool-calls"),
])
async def test_always_answers_odd_tool_call_streams(fake_deepseek, client, events, check):
    fake_deepseek.add({"fault": {"raw_events": events}})
    completion = await ask(client)
    assert check(completion.tool_calls)
    assert all(isinstance(c.id, str) and c.id for c in completion.tool_calls)


async def test_always_answers_a_multibyte_tool_argument_split_across_tcp_writes(fake_deepseek, client):
    fake_deepseek.add({"tool_calls": [{"name": "fs_read", "arguments": {"path": "日本語/ファイル.py"}}],
                       "chunk_chars": 3, "write_bytes": 1})
    completion = await ask(client)
    assert json.loads(completion.tool_calls[0].function.arguments) == {"path": "日本語/ファイル.py"}


# -- answers that are not whole: a typed error, never a partial answer taken for a whole one ------

NO_FINISH = delta({}, None)  # a closing chunk that names no finish_reason


@pytest.mark.parametrize("events, partial", [
    pytest.param([text("hel"), text("lo wo")], "hello wo", id="no-done-no-finish-mid-word"),
    pytest.param([text("ok"), call(0, id="a", name="patch_stage", arguments='{"diff": "--- a/x\\n+++ b')], "ok",
                 id="no-done-mid-tool-call-arguments"),
    # `[DONE]` ends the stream, it does not say the model finished: only a finish_reason does.
    pytest.param([text("hel"), text("lo wo"), DONE], "hello wo", id="done-without-finish-mid-word"),
    pytest.param([text("ok"), call(0, id="a", name="patch_stage", arguments='{"diff": "--- a/x\\n+++ b'), DONE],
                 "ok", id="done-without-finish-mid-tool-call-arguments"),
    pytest.param([text("hel"), text("lo"), NO_FINISH, USAGE, DONE], "hello", id="done-with-null-finish-and-usage"),
    pytest.param([text("hel"), text("lo"), ": keep-alive\n\n", DONE, DONE], "hello", id="done-twice-without-finish"),
    pytest.param([delta({"role": "assistant"}), USAGE, DONE], "", id="role-and-usage-then-done"),
])
async def test_always_answers_a_stream_that_ends_too_early_with_an_interruption(fake_deepseek, client, events, partial):
    fake_deepseek.add({"fault": {"raw_events": events}})
    seen = []
    with pytest.raises(InterruptedResponse) as caught:
        await ask(client, on_delta=seen.append)
    assert caught.value.partial.content == partial
    assert caught.value.partial.finish_reason is None  # never dressed up as a finished answer
    assert "without a finish_reason" in caught.value.user_message
    assert caught.value.attempts == 1  # data reached the caller: never sent again silently
    assert "".join(d.text for d in seen) == partial


@pytest.mark.parametrize("events", [
    pytest.param([DONE], id="only-done"),
    pytest.param([": keep-alive\n\n", DONE], id="keepalive-then-done"),
])
async def test_always_answers_done_without_anything_said_by_retrying(fake_deepseek, client, events):
    # No chunk at all: like a stream cut before any data, sent again (then answered).
    fake_deepseek.add({"fault": {"raw_events": events}})
    fake_deepseek.add({"content": "second try"})
    completion = await ask(client)
    assert (completion.content, completion.finish_reason, completion.retries) == ("second try", "stop", 1)


@pytest.mark.parametrize("garbled", [
    pytest.param(delta("hi"), id="delta-is-a-string"),
    pytest.param(delta({"content": 5}), id="content-is-a-number"),
    pytest.param(delta({"reasoning_content": ["a"]}), id="reasoning-is-a-list"),
    pytest.param(delta({"tool_calls": "fs_read"}), id="tool-calls-is-a-string"),
    pytest.param(delta({"tool_calls": [5]}), id="tool-call-is-a-number"),
    pytest.param(delta({"tool_calls": [{"index": 0, "function": "fs_read"}]}), id="function-is-a-string"),
    pytest.param(delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": 5}}]}), id="tool-name-is-a-number"),
    pytest.param(delta({}, finish=7), id="finish-reason-is-a-number"),
    pytest.param(data({"choices": {"index": 0, "delta": {"content": "x"}}}), id="choices-is-an-object"),
    pytest.param("data: [1, 2]\n\n", id="chunk-is-a-list"),
])
@pytest.mark.parametrize("after_data", [pytest.param(False, id="first"), pytest.param(True, id="after-data")])
async def test_always_answers_a_garbled_chunk_with_a_typed_error(fake_deepseek, client, garbled, after_data):
    events = ([text("partial ")] if after_data else []) + [garbled, text("more"), FINISH, DONE]
    fake_deepseek.add({"fault": {"raw_events": events}, "repeat": True})
    with pytest.raises(LLMError) as caught:
        await ask(client)
    error = caught.value
    assert "malformed" in error.user_message
    if after_data:
        assert isinstance(error, InterruptedResponse) and error.partial.content == "partial "
    else:  # nothing reached the caller: a server fault, retried, then reported
        assert isinstance(error, ServerError) and error.attempts == 3


# -- deadlines: every wait ends ------------------------------------------------------------------

@pytest.mark.parametrize("fault, error_type, words", [
    pytest.param({"raw_events": [], "cut_after_chunks": 0, "cut_with": "stall"}, NetworkError, "timed out",
                 id="headers-then-silence"),
    pytest.param({"raw_events": [text("a")], "cut_after_chunks": 1, "cut_with": "stall"}, InterruptedResponse,
                 "idle timeout", id="data-then-silence"),
    pytest.param({"raw_events": [text("a")], "cut_after_chunks": 1, "cut_with": "keepalives"}, InterruptedResponse,
                 "idle timeout", id="data-then-keepalives-forever"),
])
async def test_always_answers_a_stalled_stream_with_a_timeout(fake_deepseek, client, fault, error_type, words):
    fake_deepseek.add({"fault": fault, "repeat": True})
    with pytest.raises(error_type) as caught:
        await ask(client)
    assert words in caught.value.user_message


@pytest.mark.parametrize("fault", [
    pytest.param({"raw_events": [text("a")], "flood": text("x" * 1000)}, id="content-forever"),
    pytest.param({"raw_events": [delta({"reasoning_content": "hmm"})],
                  "flood": delta({"reasoning_content": "y" * 4000})}, id="reasoning-forever"),
    pytest.param({"raw_events": [text("a")], "flood": "z" * 4096}, id="one-line-that-never-ends"),
])
async def test_always_answers_a_body_that_never_ends_within_a_memory_cap(fake_deepseek, make_client, fault):
    client = make_client(idle_timeout_seconds=60.0,
                         profiles={"fast": ModelProfile(model="deepseek-v4-flash", max_tokens=100)})
    fake_deepseek.add({"fault": fault})
    with pytest.raises(InterruptedResponse) as caught:
        await ask(client)
    assert "MiB" in caught.value.user_message and "max_tokens" in caught.value.user_message
    assert len(caught.value.partial.content) + len(caught.value.partial.reasoning_content or "") < 9 * 2**20


async def test_always_answers_a_non_streamed_body_that_never_ends_within_a_memory_cap(fake_deepseek, make_client):
    client = make_client(idle_timeout_seconds=60.0,
                         profiles={"fast": ModelProfile(model="deepseek-v4-flash", max_tokens=100)})
    fake_deepseek.add({"fault": {"raw_events": ['{"choices": [{"message": {"content": "'], "flood": "a" * 4096},
                       "ignore_stream": False})
    with pytest.raises(LLMError) as caught:
        await ask(client, stream=False)
    assert "MiB" in caught.value.user_message


# -- HTTP answers that are not a completion ------------------------------------------------------

@pytest.mark.parametrize("fault, error_type, words, absent", [
    pytest.param({"status": 200, "content_type": "text/html; charset=utf-8",
                  "body": "<html><head><title>Sign in to the proxy</title></head><body>...</body></html>"},
                 ServerError, ["text/html", "Sign in to the proxy", "base URL"], "<html", id="200-html"),
    pytest.param({"status": 200, "body": {"error": {"message": "model overloaded"}}},
                 ServerError, ["model overloaded"], None, id="200-json-error"),
    pytest.param({"status": 502, "content_type": "text/html",
                  "body": "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>"
                          "<hr><center>nginx</center></body></html>"},
                 ServerError, ["502", "502 Bad Gateway"], "<center>", id="502-html"),
    pytest.param({"status": 404, "content_type": "text/html", "body": "<!DOCTYPE html><html><body><h1>Not here"
                  "</h1></body></html>"}, LLMError, ["404", "Not here"], "<h1>", id="404-html-without-title"),
    pytest.param({"status": 503}, ServerError, ["503"], None, id="503-every-time"),
])
async def test_always_answers_http_that_is_not_a_completion_clearly(fake_deepseek, client, fault, error_type,
                                                                    words, absent):
    fake_deepseek.add({"fault": fault, "repeat": True})
    with pytest.raises(error_type) as caught:
        await ask(client)
    message = caught.value.user_message
    assert all(w in message for w in words), message
    assert absent is None or absent not in message
    assert "\n" not in message


@pytest.mark.parametrize("headers", [
    pytest.param({"retry-after": "0"}, id="zero"),
    pytest.param({"retry-after": "99999"}, id="huge"),
    pytest.param({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"}, id="http-date-far-away"),
    pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, id="http-date-past"),
    pytest.param({"retry-after": "soon"}, id="malformed"),
    pytest.param({"retry-after": "-5"}, id="negative"),
    pytest.param({"retry-after": "inf"}, id="infinite"),
    pytest.param({"retry-after": "nan"}, id="nan"),
    pytest.param({"retry-after-ms": "nan"}, id="nan-ms"),
    pytest.param({"retry-after-ms": "1e400"}, id="overflowing-ms"),
])
async def test_always_answers_a_429_whatever_its_retry_after(fake_deepseek, client, headers):
    fake_deepseek.add({"fault": {"status": 429, "headers": headers}, "repeat": True})
    with pytest.raises(RateLimitError) as caught:
        await ask(client)
    assert caught.value.attempts == 3  # retried within llm.retry_max_seconds each time, then reported
    assert len(fake_deepseek.requests) == 3


async def test_always_answers_a_429_then_a_completion(fake_deepseek, client):
    fake_deepseek.add({"fault": {"status": 429, "headers": {"retry-after": "nan"}}})
    fake_deepseek.add({"content": "after the wait"})
    assert (await ask(client)).content == "after the wait"


async def test_always_answers_an_error_page_that_never_ends(fake_deepseek, client):
    fake_deepseek.add({"fault": {"status": 500, "content_type": "text/plain", "raw_events": ["overloaded "],
                                 "flood": "x" * 4096}, "repeat": True})
    with pytest.raises(ServerError) as caught:
        await ask(client)
    assert "500" in caught.value.user_message and "overloaded" in caught.value.user_message
    assert caught.value.attempts == 3


async def test_always_answers_a_redirect_without_following_it(fake_deepseek, client):
    from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

    with FakeDeepSeek([{"content": "from the other origin", "repeat": True}]) as elsewhere:
        fake_deepseek.add({"fault": {"status": 307, "headers": {"location": f"{elsewhere.base_url}/chat/completions"}},
                           "repeat": True})
        with pytest.raises(LLMError) as caught:
            await ask(client)
        assert elsewhere.requests == []  # neither the prompt nor the Authorization header went there
    assert f"redirecting to {elsewhere.base_url}/chat/completions" in caught.value.user_message
    assert "base URL" in caught.value.user_message and caught.value.attempts == 1


@pytest.mark.parametrize("choice, whole", [
    pytest.param({"index": 0, "message": {"role": "assistant", "content": "--- a/app.py"}}, False, id="no-finish-reason"),
    pytest.param({"index": 0, "message": {"role": "assistant", "content": "--- a/app.py"}, "finish_reason": None},
                 False, id="null-finish-reason"),
    pytest.param({"index": 0, "message": {"role": "assistant", "content": "--- a/app.py"}, "finish_reason": "stop"},
                 True, id="stop-control"),
])
async def test_always_answers_a_json_answer_without_a_finish_reason_as_interrupted(fake_deepseek, client, choice, whole):
    # As for a stream: an answer whose end nobody vouches for is never taken for a whole one.
    fake_deepseek.add({"fault": {"status": 200, "body": {"id": "x", "object": "chat.completion", "model": "m",
                                                           "choices": [choice]}}})
    if whole:
        assert (await ask(client)).content == "--- a/app.py"
        return
    with pytest.raises(InterruptedResponse) as caught:
        await ask(client)
    assert caught.value.partial.content == "--- a/app.py" and "finish_reason" in caught.value.user_message
