"""The model registry: presets as data, config entries layered on them, profiles naming entries."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.config import ConfigError, load_config
from deepseek_ls.config_models import Config, LLMConfig, ModelProfile, preset_tables
from deepseek_ls.llm import LLMClient
from deepseek_ls.llm.errors import AuthError
from deepseek_ls.llm.profiles import resolve_profile

KEY = {"DEEPSEEK_API_KEY": "k"}
USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}


def loaded(tmp_path: Path, toml: str, **env: str):
    ws = tmp_path / "ws"
    (ws / ".deepseek").mkdir(parents=True, exist_ok=True)
    (ws / ".deepseek" / "config.toml").write_text(toml)
    return load_config(ws, env={"DEEPSEEK_LS_USER_CONFIG": str(tmp_path / "none.toml"), **env})


def test_shipped_presets_are_data_with_prices_and_capabilities():
    models = Config().models
    assert {"deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro", "openai-compatible", "ollama",
            "llama-cpp"} <= set(models)
    flash, pro = models["deepseek-v4-flash"], models["deepseek-v4-pro"]
    # The legacy name is billed as Flash: the same off-peak rates and peak schedule as deepseek-flash.
    current = models["deepseek-flash"]
    for entry in (flash, current):
        assert (entry.price_cache_hit, entry.price_cache_miss, entry.price_output) == (0.003, 0.15, 0.60)
        assert entry.peak_price_factor == 2.0 and entry.peak_hours_utc == ["01:00-04:00", "06:00-10:00"]
        assert entry.peak_days == ["mon", "tue", "wed", "thu", "fri"]
    assert pro.price_output > flash.price_output and pro.thinking_switch == "thinking"
    assert models["ollama"].reasoning_field == "reasoning" and models["ollama"].thinking_switch == "reasoning_effort"
    assert models["llama-cpp"].thinking_switch == "none" and not models["llama-cpp"].api_key_required
    assert set(preset_tables()) == {name for name in models}  # nothing hard-coded beside the TOML


def test_a_config_table_changes_only_the_keys_it_names(tmp_path):
    cfg = loaded(tmp_path, '[models.deepseek-v4-flash]\nprice_output = 0.5\n')
    flash = cfg.config.models["deepseek-v4-flash"]
    assert flash.price_output == 0.5 and flash.price_cache_miss == 0.15
    assert cfg.sources["models.deepseek-v4-flash.price_output"].endswith("config.toml")
    assert cfg.sources["models.deepseek-v4-flash.price_cache_miss"] == "preset"


def test_an_entry_can_start_from_a_preset_and_a_profile_names_it(tmp_path):
    cfg = loaded(tmp_path, '[models.local]\npreset = "llama-cpp"\nid = "smollm2"\ncontext_window = 2048\n'
                           'base_url = "http://127.0.0.1:9/v1"\n[llm.profiles.local]\nmodel = "local"\n')
    local = cfg.config.models["local"]
    assert (local.id, local.provider, local.context_window) == ("smollm2", "llama-cpp", 2048)
    assert local.max_output_tokens <= 1024  # shrunk with the window it was given
    assert cfg.sources["models.local.provider"] == "preset llama-cpp"
    resolved = resolve_profile(cfg.config.llm, "local", env={})  # no key needed for a local server
    assert (resolved.model, resolved.base_url, resolved.api_key) == ("smollm2", "http://127.0.0.1:9/v1", "")


def test_unknown_preset_is_a_config_error_naming_the_presets(tmp_path):
    with pytest.raises(ConfigError, match="unknown preset 'llama'.*llama-cpp"):
        loaded(tmp_path, '[models.x]\npreset = "llama"\nid = "x"\n')


def test_legacy_profile_config_keeps_working():
    config = LLMConfig(base_model="deepseek-chat", max_think_model="deepseek-reasoner")
    fast = resolve_profile(config, "fast", env=KEY)
    think = resolve_profile(config, "max_think", env=KEY)
    assert fast.model == "deepseek-chat" and "thinking" not in fast.params
    assert think.model == "deepseek-reasoner" and think.thinking


def test_missing_key_for_a_server_that_needs_one_names_that_server():
    config = Config.model_validate({"models": {"vllm": {"preset": "openai-compatible", "id": "qwen",
                                                        "base_url": "http://10.0.0.1:8000/v1",
                                                        "api_key_required": True}},
                                    "llm": {"profiles": {"fast": {"model": "vllm"}}}})
    with pytest.raises(AuthError, match="OPENAI_API_KEY is not set.*API key for http://10.0.0.1:8000/v1"):
        resolve_profile(config.llm, "fast", env={})


@pytest.mark.parametrize(
    ("preset", "thinking", "expected", "absent"),
    [
        pytest.param("deepseek-v4-pro", True, {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}, [],
                     id="deepseek-thinking-object"),
        pytest.param("ollama", True, {"reasoning_effort": "high"}, ["thinking"], id="ollama-effort-on"),
        pytest.param("ollama", False, {"reasoning_effort": "none"}, ["thinking"], id="ollama-effort-none-turns-off"),
        pytest.param("llama-cpp", True, {}, ["thinking", "reasoning_effort"], id="no-switch-sends-neither"),
    ],
)
def test_thinking_switch_follows_the_capability(preset, thinking, expected, absent):
    config = Config.model_validate({"llm": {"profiles": {"p": {"model": preset, "thinking": thinking,
                                                               "reasoning_effort": "high"}}}})
    resolved = resolve_profile(config.llm, "p", env=KEY)
    for key, value in expected.items():
        assert resolved.params[key] == value
    for key in absent:
        assert key not in resolved.params
    assert resolved.params["max_tokens"] == config.models[preset].default_max_tokens


def test_never_send_stream_options_or_tools_a_model_does_not_take():
    config = Config.model_validate({"models": {"plain": {"preset": "llama-cpp", "tools": False}},
                                    "llm": {"profiles": {"fast": {"model": "plain"}}}})
    llm = LLMClient(config.llm, env={})
    body = llm.build_body(llm.resolve("fast"), USER, stream=True, tools=[TOOL], tool_choice="auto")
    assert "stream_options" not in body and "tools" not in body and "tool_choice" not in body
    assert "thinking" not in body and "reasoning_effort" not in body


def test_never_escalate_a_deepseek_model_to_a_local_server():
    # fast names a local server; DEEPSEEK_BASE_URL points at the same server (as users do).
    config = Config.model_validate({"models": {"local": {"preset": "llama-cpp", "id": "smollm2",
                                                         "base_url": "http://127.0.0.1:8080/v1"}},
                                    "llm": {"profiles": {"fast": {"model": "local"}}}})
    env = {"DEEPSEEK_BASE_URL": "http://127.0.0.1:8080/v1"}
    think = resolve_profile(config.llm, "max_think", env=env)
    assert think.model == "smollm2" and "thinking" not in think.params
    assert "deepseek-v4-pro is not served by http://127.0.0.1:8080/v1" in think.note
    # With DeepSeek's own endpoint for max-think, escalation still goes there.
    cloud = resolve_profile(config.llm, "max_think", env=KEY)
    assert cloud.model == "deepseek-v4-pro" and cloud.base_url == "https://api.deepseek.com"


def test_models_command_lists_entries_with_sources(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".deepseek").mkdir(parents=True)
    (ws / ".deepseek" / "config.toml").write_text('[models.deepseek-v4-pro]\nprice_output = 1.0\n')
    out = subprocess.run(
        [sys.executable, "-m", "deepseek_ls", "--workspace", str(ws), "models", "--json"],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "DEEPSEEK_LS_USER_CONFIG": str(tmp_path / "none.toml")},
    )
    assert out.returncode == 0, out.stderr
    entries = {e["name"]: e for e in json.loads(out.stdout)["models"]}
    pro = entries["deepseek-v4-pro"]
    assert pro["values"]["price_output"] == 1.0 and pro["sources"]["price_output"].endswith("config.toml")
    assert pro["sources"]["context_window"] == "preset" and pro["profiles"] == ["max_think"]
    assert entries["deepseek-v4-flash"]["profiles"] == ["fast"]
    assert entries["llama-cpp"]["values"]["thinking_switch"] == "none"
