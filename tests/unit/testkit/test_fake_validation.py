"""The fake answers invalid requests the way the real DeepSeek API does."""

import httpx
import pytest

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.testkit.validation import REASONING_RULE_MESSAGE

USER = [{"role": "user", "content": "hi"}]
CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}


@pytest.mark.parametrize(
    "headers", [pytest.param({}, id="no-header"), pytest.param({"Authorization": "Bearer"}, id="empty-key"),
                pytest.param({"Authorization": "Basic abc"}, id="wrong-scheme")]
)
def test_missing_auth_is_401(fake_deepseek, api, headers):
    fake_deepseek.add({"content": "never"})
    response = api.chat(USER, headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
    assert fake_deepseek.script.unused()  # the reply was not spent


def test_a_configured_key_must_match():
    with FakeDeepSeek([{"content": "ok", "repeat": True}], api_key="right") as fake:
        wrong = httpx.post(f"{fake.base_url}/chat/completions", headers={"Authorization": "Bearer wrong"},
                           json={"model": "deepseek-chat", "messages": USER})
        right = httpx.post(f"{fake.base_url}/chat/completions", headers={"Authorization": "Bearer right"},
                           json={"model": "deepseek-chat", "messages": USER})
    assert (wrong.status_code, right.status_code) == (401, 200)


@pytest.mark.parametrize(
    ("messages", "status", "message_part"),
    [
        pytest.param([], 422, "non-empty", id="empty"),
        pytest.param([{"role": "robot", "content": "x"}], 422, "unknown variant", id="bad-role"),
        pytest.param([{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "c9", "content": "r"}],
                     400, "must be a response to a preceding message", id="orphan-tool"),
        pytest.param([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [CALL]},
                      {"role": "user", "content": "again"}], 400, "must be followed by tool messages",
                     id="missing-tool-result"),
        pytest.param([{"role": "user", "content": "q"}, {"role": "system", "content": "late"}],
                     400, "system message must come before", id="late-system"),
        pytest.param([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                     400, "last message", id="ends-with-assistant"),
    ],
)
def test_invalid_conversations_are_rejected(fake_deepseek, api, messages, status, message_part):
    fake_deepseek.add({"content": "never", "repeat": True})
    response = api.chat(messages)
    assert response.status_code == status
    assert message_part in response.json()["error"]["message"]


def test_missing_model_is_422(api):
    response = httpx.post(f"{api.base_url}/chat/completions", headers=api.headers, json={"messages": USER})
    assert response.status_code == 422


def test_invalid_json_is_400(api):
    response = httpx.post(f"{api.base_url}/chat/completions", headers=api.headers, content=b"{nope")
    assert response.status_code == 400


TOOL_TURN = [
    {"role": "user", "content": "read a.py"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "text"},
]


@pytest.mark.parametrize(
    "thinking_fields",
    [pytest.param({"model": "deepseek-v4-pro", "thinking": {"type": "enabled"}}, id="flag"),
     pytest.param({"model": "deepseek-reasoner"}, id="legacy-reasoner"),
     pytest.param({"model": "deepseek-v4-flash"}, id="current-model-default-on")],
)
def test_thinking_mode_requires_reasoning_content_on_tool_call_turns(fake_deepseek, api, thinking_fields):
    fake_deepseek.add({"content": "ok", "repeat": True})
    rejected = api.chat(TOOL_TURN, **thinking_fields)
    assert rejected.status_code == 400
    assert rejected.json()["error"]["message"] == REASONING_RULE_MESSAGE
    fixed = [dict(m) for m in TOOL_TURN]
    fixed[1]["reasoning_content"] = "I will read it"
    assert api.content(api.chat(fixed, **thinking_fields)) == "ok"


@pytest.mark.parametrize(
    "fields", [pytest.param({"thinking": {"type": "disabled"}, "model": "deepseek-v4-flash"}, id="flag-off"),
               pytest.param({"model": "deepseek-chat"}, id="legacy-chat")],
)
def test_without_thinking_tool_turns_need_no_reasoning(fake_deepseek, api, fields):
    fake_deepseek.add({"content": "ok"})
    assert api.content(api.chat(TOOL_TURN, **fields)) == "ok"
