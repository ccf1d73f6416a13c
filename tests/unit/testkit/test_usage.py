"""Usage accounting of the fake: token estimate and the prompt-cache prefix."""

import os

from hypothesis import given
from hypothesis import strategies as st

from deepseek_ls.testkit.responses import PromptCache, _common_prefix, tokens
from deepseek_ls.testkit.script import Reply


@given(st.text(alphabet="ab", max_size=30), st.text(alphabet="ab", max_size=30))
def test_common_prefix_matches_the_obvious_definition(a, b):
    assert _common_prefix(a, b) == len(os.path.commonprefix([a, b]))


def test_reasoning_tokens_are_reported_only_when_there_is_reasoning():
    cache = PromptCache()
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 40}]}
    plain = cache.usage(body, Reply(content="y" * 8))
    thinking = cache.usage(body, Reply(content="y" * 8, reasoning_content="z" * 12))
    assert "completion_tokens_details" not in plain
    assert thinking["completion_tokens_details"] == {"reasoning_tokens": 3}
    assert thinking["completion_tokens"] == tokens("y" * 8) + 3
