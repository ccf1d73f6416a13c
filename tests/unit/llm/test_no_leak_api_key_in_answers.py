"""The API key never reaches a message, a log line or an event, whatever a server echoes back.

Servers do echo keys: OpenAI-style 401s name the key they rejected, proxies print the request's
headers in their error pages, a debugging server may put them anywhere. Through the real client
against the fake server over real HTTP; every error path checked for the key in the error's message,
detail and args, the log records and the `LLMCall@v1` events.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from deepseek_ls.llm.errors import LLMError

KEY = "sk-LEAKCANARY-0123456789abcdef"


def echoing(status: int, *, html: bool = False) -> dict:
    if html:
        page = f"<html><head><title>{status} Error</title></head><body>Authorization: Bearer {KEY}</body></html>"
        return {"status": status, "content_type": "text/html", "body": page}
    return {"status": status, "body": {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "x"}}}


def stream_error() -> dict:
    return {"raw_events": [f'data: {json.dumps({"error": {"message": f"bad key {KEY}"}})}\n\n']}


def stream_error_after_data() -> dict:
    text = json.dumps({"choices": [{"index": 0, "delta": {"content": "hi"}}]})
    return {"raw_events": [f"data: {text}\n\n", f'data: {json.dumps({"error": {"message": f"key {KEY}"}})}\n\n']}


@pytest.mark.parametrize("fault", [
    *[pytest.param(echoing(status), id=f"{status}-json") for status in (400, 401, 402, 403, 404, 422, 429, 500, 503)],
    *[pytest.param(echoing(status, html=True), id=f"{status}-html") for status in (401, 403, 502)],
    pytest.param({"status": 200, "body": {"error": {"message": f"key {KEY} is disabled"}}}, id="200-json-error"),
    pytest.param({"status": 200, "content_type": "text/html",
                  "body": f"<html><title>Hello {KEY}</title></html>"}, id="200-html-page"),
    pytest.param({"status": 302, "headers": {"location": f"http://127.0.0.1:9/?key={KEY}"}}, id="redirect-naming-it"),
    pytest.param(stream_error(), id="error-in-the-stream"),
    pytest.param(stream_error_after_data(), id="error-in-the-stream-after-data"),
    pytest.param({"raw_events": [f"data: {{\"key\": \"{KEY}\", oops\n\n"]}, id="malformed-json-quoting-it"),
])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_no_leak_api_key_in_errors_logs_or_events(fake_deepseek, monkeypatch, make_client, sink, caplog,
                                                       fault, stream):
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    fake_deepseek.add({"fault": fault, "repeat": True})
    client = make_client()
    caplog.set_level(logging.DEBUG, logger="deepseek_ls")  # ours; httpcore's own DEBUG trace prints raw headers
    with pytest.raises(LLMError) as caught:
        async with asyncio.timeout(30):
            await client.complete([{"role": "user", "content": "hi"}], role="ask", stream=stream)
    error = caught.value
    assert fake_deepseek.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was really sent
    seen = {
        "message": error.user_message,
        "str": str(error),
        "args": repr(error.args),
        "detail": str(error.detail),
        "logs": caplog.text,
        "events": json.dumps([e for e in sink.events], default=str),
    }
    leaked = [where for where, text in seen.items() if KEY in text or KEY[8:] in text]
    assert not leaked, f"the API key leaked into: {leaked}"
    assert error.user_message.strip()  # still says what happened
