"""Config layering (defaults < user < workspace < env < --config < command line) and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.config import ConfigError, load_config, mask_secret


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".deepseek").mkdir(parents=True)
    return root


@pytest.fixture
def user_toml(tmp_path: Path) -> Path:
    return tmp_path / "user" / "config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def env_with(user_toml: Path, **extra: str) -> dict[str, str]:
    return {"DEEPSEEK_LS_USER_CONFIG": str(user_toml), **extra}


def test_nothing_configured_gives_defaults_from_default_source(ws, user_toml):
    loaded = load_config(ws, env=env_with(user_toml))
    assert loaded.config.router.threshold_high == 0.72
    assert loaded.config.llm.profiles["fast"].model == "deepseek-v4-flash"
    assert set(loaded.sources.values()) == {"default", "preset"}
    assert "router.threshold_high" in loaded.sources
    assert loaded.api_key is None


def test_each_layer_overrides_the_one_before_and_is_named_as_source(ws, user_toml, tmp_path):
    write(user_toml, "[router]\nthreshold_high = 0.1\nplanner_bias = 0.2\n[index]\nenabled = false\n")
    write(ws / ".deepseek" / "config.toml", "[router]\nthreshold_high = 0.3\nbreadth_files_k = 5\n")
    extra = write(tmp_path / "extra.toml", "[router]\nthreshold_high = 0.5\n")
    env = env_with(user_toml, DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH="0.4", DEEPSEEK_LS_ROUTER__PLANNER_BIAS="0.25")

    loaded = load_config(ws, env=env)
    assert loaded.config.router.threshold_high == 0.4
    assert loaded.sources["router.threshold_high"] == "env DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH"
    assert loaded.config.router.breadth_files_k == 5
    assert loaded.sources["router.breadth_files_k"] == str(ws / ".deepseek" / "config.toml")
    assert loaded.config.index.enabled is False
    assert loaded.sources["index.enabled"] == str(user_toml)

    loaded = load_config(ws, env=env, config_path=extra)
    assert loaded.config.router.threshold_high == 0.5
    assert loaded.sources["router.threshold_high"] == str(extra)

    loaded = load_config(ws, env=env, config_path=extra, cli_overrides={"router.threshold_high": 0.9})
    assert loaded.config.router.threshold_high == 0.9
    assert loaded.sources["router.threshold_high"] == "command line"
    # Untouched by the later layers: still the env value.
    assert loaded.config.router.planner_bias == 0.25


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        pytest.param("0.8", "router.threshold_high", 0.8, id="float"),
        pytest.param("false", "index.enabled", False, id="bool"),
        pytest.param('["pytest", "rg"]', "policy.allowlist", ["pytest", "rg"], id="toml-list"),
        pytest.param("batch", "router.latency_mode", "batch", id="bare-string"),
        pytest.param("deepseek-v4", "llm.profiles.fast.model", "deepseek-v4", id="nested-profile"),
    ],
)
def test_environment_values_are_read_as_toml_values_when_they_parse(ws, user_toml, raw, key, expected):
    name = "DEEPSEEK_LS_" + "__".join(part.upper() for part in key.split("."))
    loaded = load_config(ws, env=env_with(user_toml, **{name: raw}))
    value = loaded.config.model_dump()
    for part in key.split("."):
        value = value[part]
    assert value == expected
    assert loaded.sources[key] == f"env {name}"


def test_deepseek_base_url_sets_llm_base_url_and_api_key_is_read_not_stored(ws, user_toml):
    env = env_with(user_toml, DEEPSEEK_BASE_URL="http://127.0.0.1:9/v1", DEEPSEEK_API_KEY="sk-0123456789abcdef")
    loaded = load_config(ws, env=env)
    assert loaded.config.llm.base_url == "http://127.0.0.1:9/v1"
    assert loaded.sources["llm.base_url"] == "env DEEPSEEK_BASE_URL"
    assert loaded.api_key == "sk-0123456789abcdef"
    assert "sk-0123456789abcdef" not in loaded.config.model_dump_json()
    assert loaded.api_key_display() == "set (...cdef)"


def test_other_deepseek_ls_variables_are_not_config_keys(ws, user_toml):
    loaded = load_config(ws, env=env_with(user_toml, DEEPSEEK_LS_LOG="debug"))
    assert set(loaded.sources.values()) == {"default", "preset"}


def test_unknown_key_in_workspace_file_is_an_error_naming_file_key_and_suggestion(ws, user_toml):
    path = write(ws / ".deepseek" / "config.toml", "[router]\nthreshold_hihg = 0.5\n")
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml))
    error = caught.value
    assert error.file == str(path)
    assert error.key == "router.threshold_hihg"
    assert "unknown key" in error.reason and "threshold_high" in error.reason


def test_unknown_section_is_an_error(ws, user_toml):
    write(user_toml, "[routr]\nthreshold_high = 0.5\n")
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml))
    assert caught.value.file == str(user_toml)
    assert caught.value.key == "routr"


def test_bad_value_names_the_layer_that_set_it(ws, user_toml):
    write(user_toml, "[router]\nplanner_bias = 0.5\n")
    path = write(ws / ".deepseek" / "config.toml", "[router]\nplanner_bias = 7\n")
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml))
    assert caught.value.file == str(path)
    assert caught.value.key == "router.planner_bias"
    assert "less than or equal to 1" in caught.value.reason


def test_bad_env_value_names_the_variable(ws, user_toml):
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml, DEEPSEEK_LS_AGENT_LOOP__MAX_ITERATIONS="many"))
    assert caught.value.file == "env DEEPSEEK_LS_AGENT_LOOP__MAX_ITERATIONS"
    assert caught.value.key == "agent_loop.max_iterations"


def test_invalid_toml_is_reported_with_the_file(ws, user_toml):
    path = write(ws / ".deepseek" / "config.toml", "[router\nthreshold_high = \n")
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml))
    assert caught.value.file == str(path)
    assert "not valid TOML" in caught.value.reason
    assert path.read_text() == "[router\nthreshold_high = \n"  # the user's file is untouched


def test_missing_config_path_is_an_error(ws, user_toml, tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_config(ws, env=env_with(user_toml), config_path=tmp_path / "nope.toml")


def test_profile_flag_makes_the_named_profile_the_fast_one(ws, user_toml):
    # In the user's config: from an untrusted workspace a base_url would be ignored (tests/unit/config/test_trust.py).
    write(
        user_toml,
        '[llm.profiles.local]\nmodel = "qwen2.5-coder"\nbase_url = "http://127.0.0.1:11434/v1"\n',
    )
    loaded = load_config(ws, env=env_with(user_toml), profile="local")
    fast = loaded.config.llm.profiles["fast"]
    assert (fast.model, fast.base_url) == ("qwen2.5-coder", "http://127.0.0.1:11434/v1")
    assert loaded.config.llm.profiles["max_think"].model == "deepseek-v4-pro"
    assert loaded.sources["llm.profiles.fast.model"] == "--profile local"
    assert loaded.profile == "local"


def test_unknown_profile_is_an_error_listing_known_ones(ws, user_toml):
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml), profile="turbo")
    assert caught.value.file == "--profile"
    assert "fast" in caught.value.reason and "max_think" in caught.value.reason


def test_appendix_a_names_set_the_profiles_and_are_credited(ws, user_toml):
    path = write(
        ws / ".deepseek" / "config.toml",
        '[llm]\nbase_model = "deepseek-chat"\nmax_think_model = "deepseek-reasoner-x"\ntemperature = 0.4\n',
    )
    loaded = load_config(ws, env=env_with(user_toml))
    assert loaded.config.llm.profiles["max_think"].model == "deepseek-reasoner-x"
    assert loaded.config.llm.profiles["fast"].temperature == 0.4
    assert loaded.sources["llm.profiles.max_think.model"] == f"{path} (llm.max_think_model)"


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        pytest.param(None, "not set", id="unset"),
        pytest.param("", "not set", id="empty"),
        pytest.param("short", "set", id="short-shows-nothing"),
        pytest.param("sk-abcdefghijklmnop", "set (...mnop)", id="last-four"),
    ],
)
def test_mask_secret_never_shows_more_than_four_characters(secret, shown):
    assert mask_secret(secret) == shown


def test_a_partial_profile_table_changes_only_the_keys_it_names(ws, user_toml):
    write(ws / ".deepseek" / "config.toml", '[llm.profiles.max_think]\nmodel = "deepseek-v4"\n')
    loaded = load_config(ws, env=env_with(user_toml))
    max_think = loaded.config.llm.profiles["max_think"]
    assert max_think.model == "deepseek-v4"
    assert (max_think.thinking, max_think.reasoning_effort) == (True, "high")
    assert loaded.config.llm.profiles["fast"].temperature == 0.2
    assert loaded.sources["llm.profiles.max_think.thinking"] == "default"


def test_unknown_key_inside_a_profile_is_reported(ws, user_toml):
    write(ws / ".deepseek" / "config.toml", "[llm.profiles.fast]\nthinkng = true\n")
    with pytest.raises(ConfigError) as caught:
        load_config(ws, env=env_with(user_toml))
    assert caught.value.key == "llm.profiles.fast.thinkng"
    assert "did you mean 'thinking'" in caught.value.reason
