"""Retry-After parsing and the wait it produces."""

from email.utils import formatdate
import time

import pytest
from tenacity import RetryCallState

from deepseek_ls.config_models import LLMConfig
from deepseek_ls.llm.errors import RateLimitError, ServerError
from deepseek_ls.llm.retry import _Wait, parse_retry_after


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after-ms": "250", "retry-after": "9"}, 0.25, id="ms-wins"),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date():
    value = parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert value is not None and 25 <= value <= 31


def _state_after(exc: BaseException, attempt: int = 1) -> RetryCallState:
    state = RetryCallState(retry_object=None, fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_server_retry_after_replaces_backoff_and_is_capped():
    wait = _Wait(LLMConfig(retry_base_seconds=5.0, retry_max_seconds=10.0))
    assert wait(_state_after(RateLimitError("x", retry_after=0.2))) == 0.2
    assert wait(_state_after(RateLimitError("x", retry_after=600))) == 10.0


def test_backoff_grows_with_jitter_and_stays_under_the_cap():
    wait = _Wait(LLMConfig(retry_base_seconds=1.0, retry_max_seconds=8.0))
    first = wait(_state_after(ServerError("x"), attempt=1))
    third = wait(_state_after(ServerError("x"), attempt=3))
    assert 1.0 <= first <= 2.0
    assert 4.0 <= third <= 8.0
