"""Fixtures for LLM client tests: a client wired to the in-process fake DeepSeek server."""

from __future__ import annotations

import pytest

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm import LLMClient
from deepseek_ls.store.sink import ListSink

USER = [{"role": "user", "content": "hi"}]


def fast_config(**overrides) -> LLMConfig:
    """Real retry and timeout logic, with waits short enough for unit tests."""
    values = {
        "retry_base_seconds": 0.001,
        "retry_max_seconds": 0.05,
        "idle_timeout_seconds": 0.5,
        "connect_timeout_seconds": 2.0,
        "max_retries": 2,
    }
    values.update(overrides)
    return LLMConfig(**values)


@pytest.fixture
def sink() -> ListSink:
    return ListSink()


@pytest.fixture
async def client(fake_deepseek, sink):
    llm = LLMClient(fast_config(), sink=sink)
    yield llm
    await llm.aclose()
