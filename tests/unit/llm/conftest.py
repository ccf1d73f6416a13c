"""Fixtures for LLM client tests: a client wired to the in-process fake DeepSeek server."""

from __future__ import annotations

import pytest

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm import LLMClient
from deepseek_ls.sink import ListSink


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
async def make_client(sink):
    """`make_client(**llm_config_overrides)`: a client recording into `sink`, closed after the test."""
    made: list[LLMClient] = []

    def make(**overrides) -> LLMClient:
        made.append(LLMClient(fast_config(**overrides), sink=sink))
        return made[-1]

    yield make
    for llm in made:
        await llm.aclose()


@pytest.fixture
async def client(fake_deepseek, make_client):
    return make_client()
