"""Profiles become request parameters; base URL and key come from profile, env or config."""

import pytest

from deepseek_ls.config_models import LLMConfig, ModelProfile
from deepseek_ls.llm.errors import AuthError, BadRequestError
from deepseek_ls.llm.models import lookup
from deepseek_ls.llm.profiles import request_params, resolve_profile

KEY = {"DEEPSEEK_API_KEY": "k"}


@pytest.mark.parametrize(
    ("profile", "model", "expected"),
    [
        pytest.param(ModelProfile(model="deepseek-v4-pro", thinking=True, reasoning_effort="high", temperature=0.3),
                     "deepseek-v4-pro", {"thinking": {"type": "enabled"}, "reasoning_effort": "high", "max_tokens": 65536},
                     id="current-model-thinking-no-temperature"),
        pytest.param(ModelProfile(model="deepseek-v4-flash", thinking=False, temperature=0.2, max_tokens=100),
                     "deepseek-v4-flash", {"thinking": {"type": "disabled"}, "temperature": 0.2, "max_tokens": 100},
                     id="current-model-fast"),
        pytest.param(ModelProfile(model="deepseek-reasoner", thinking=True, reasoning_effort="high", temperature=0.5),
                     "deepseek-reasoner", {"max_tokens": 32768}, id="legacy-reasoner-no-flag-no-temperature"),
        pytest.param(ModelProfile(model="deepseek-chat", temperature=0.2), "deepseek-chat", {"temperature": 0.2, "max_tokens": 32768},
                     id="legacy-chat"),
    ],
)
def test_request_params(profile, model, expected):
    _, entry = lookup(LLMConfig().models, model)
    assert request_params(profile, entry) == expected


def test_base_url_precedence_profile_then_env_then_config():
    config = LLMConfig(base_url="http://config.example")
    assert resolve_profile(config, "fast", env=KEY).base_url == "http://config.example"
    env = {**KEY, "DEEPSEEK_BASE_URL": "http://env.example/"}
    assert resolve_profile(config, "fast", env=env).base_url == "http://env.example"
    config.profiles["fast"] = config.profiles["fast"].model_copy(update={"base_url": "http://profile.example"})
    assert resolve_profile(config, "fast", env=env).base_url == "http://profile.example"


def test_missing_key_is_an_auth_error_naming_the_variable():
    with pytest.raises(AuthError, match="DEEPSEEK_API_KEY is not set"):
        resolve_profile(LLMConfig(), "fast", env={})


def test_profile_with_its_own_key_variable():
    config = LLMConfig()
    config.profiles["local"] = ModelProfile(model="qwen", api_key_env="LOCAL_KEY", base_url="http://127.0.0.1:1")
    resolved = resolve_profile(config, "local", env={"LOCAL_KEY": "abc"})
    assert (resolved.api_key, resolved.model, resolved.thinking) == ("abc", "qwen", False)


def test_model_override_and_legacy_reasoner_implies_thinking():
    resolved = resolve_profile(LLMConfig(), "fast", model="deepseek-reasoner", env=KEY)
    assert resolved.model == "deepseek-reasoner" and resolved.thinking


def test_unknown_profile_is_a_clear_error():
    with pytest.raises(BadRequestError, match="unknown model profile 'nope'"):
        resolve_profile(LLMConfig(), "nope", env=KEY)
