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


def test_the_fake_process_answers_a_wait_for_requests_once_they_arrive(fake_deepseek_process):
    """`wait_for_requests(N)` returns when the N-th request arrives (the server wakes it, the test
    does not sleep), and says so after its timeout when they do not."""
    import threading

    import pytest

    fake = fake_deepseek_process([{"content": "one"}, {"content": "two"}])
    chat = {"model": "deepseek-chat", "messages": [{"role": "user", "content": "hi"}]}

    def send() -> None:
        httpx.post(f"{fake.base_url}/chat/completions", json=chat, headers={"X-DeepSeek-LS-Role": "ask"})

    with pytest.raises(TimeoutError, match="got 0 requests, expected 1"):
        fake.wait_for_requests(1, timeout=0.2)
    sender = threading.Thread(target=send)
    sender.start()
    assert [r["role"] for r in fake.wait_for_requests(1, timeout=30)] == ["ask"]
    sender.join(30)
    second = threading.Thread(target=send)
    second.start()
    assert len(fake.wait_for_requests(2, timeout=30)) == 2
    second.join(30)
