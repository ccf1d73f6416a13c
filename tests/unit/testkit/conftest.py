"""Helpers to talk to the fake server with plain HTTP, as a real client would."""

from __future__ import annotations

import httpx
import pytest


class Api:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.headers = {"Authorization": "Bearer test-key"}

    def chat(self, messages, *, role=None, headers=None, **fields) -> httpx.Response:
        body = {"model": fields.pop("model", "deepseek-chat"), "messages": messages, **fields}
        sent = dict(self.headers if headers is None else headers)
        if role:
            sent["X-DeepSeek-LS-Role"] = role
        return httpx.post(f"{self.base_url}/chat/completions", json=body, headers=sent)

    def content(self, response: httpx.Response) -> str:
        assert response.status_code == 200, response.text
        return response.json()["choices"][0]["message"]["content"]


@pytest.fixture
def api(fake_deepseek) -> Api:
    return Api(fake_deepseek.base_url)
