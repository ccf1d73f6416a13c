"""pytest fixtures for the fake DeepSeek server (loaded by tests/conftest.py).

- `fake_deepseek`: a started in-process `FakeDeepSeek` with an empty script; add
  replies with ``fake_deepseek.add({...})``. It also sets ``DEEPSEEK_BASE_URL``
  and ``DEEPSEEK_API_KEY=test-key`` in the environment for the test.
- `fake_deepseek_process`: a factory starting the fake as a child process from a
  script (list of replies or a file); stopped after the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.testkit.process import FakeDeepSeekProcess

TEST_API_KEY = "test-key"


@pytest.fixture
def fake_deepseek(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDeepSeek]:
    fake = FakeDeepSeek().start()
    monkeypatch.setenv("DEEPSEEK_BASE_URL", fake.base_url)
    monkeypatch.setenv("DEEPSEEK_API_KEY", TEST_API_KEY)
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def fake_deepseek_process(tmp_path: Path) -> Iterator[Callable[..., FakeDeepSeekProcess]]:
    started: list[FakeDeepSeekProcess] = []

    def start(script: Path | list[dict[str, Any]] | None = None, **kwargs: Any) -> FakeDeepSeekProcess:
        proc = FakeDeepSeekProcess(script, workdir=tmp_path, **kwargs).start()
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()
