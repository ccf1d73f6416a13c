"""The `fake_deepseek` fixture serves a scripted reply and points the environment at itself."""

import os

import httpx


def test_fixture_serves_scripted_reply_and_sets_env(fake_deepseek):
    fake_deepseek.add({"content": "hello from the script"})
    assert os.environ["DEEPSEEK_BASE_URL"] == fake_deepseek.base_url
    response = httpx.post(
        f"{os.environ['DEEPSEEK_BASE_URL']}/chat/completions",
        json={"model": "deepseek-chat", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {os.environ['DEEPSEEK_API_KEY']}", "X-DeepSeek-LS-Role": "ask"},
    )
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "hello from the script"
    assert [r.role for r in fake_deepseek.requests] == ["ask"]
