"""The default configuration and the commented template `config edit` writes."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from deepseek_ls.cli.config_cmd import commented_defaults
from deepseek_ls.config_models import Config, LLMConfig


def test_uncommenting_the_whole_template_gives_exactly_the_defaults():
    text = commented_defaults()
    uncommented = "\n".join(line[2:] if line.startswith("# ") and not line.startswith("# deepseek-ls")
                            and not line.startswith("# see ") else line for line in text.splitlines())
    assert Config.model_validate(tomllib.loads(uncommented)) == Config()


def test_fast_and_max_think_profiles_always_exist_and_legacy_names_set_them():
    llm = LLMConfig(profiles={}, base_model="deepseek-chat", max_think_model="deepseek-reasoner")
    assert set(llm.profiles) >= {"fast", "max_think"}
    assert llm.profiles["max_think"].thinking is True
    assert llm.profiles["max_think"].model == "deepseek-reasoner"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"router": {"threshold_high": -0.1}}, id="negative-threshold"),
        pytest.param({"policy": {"approval_mode": "always"}}, id="unknown-approval-mode"),
        pytest.param({"agent_loop": {"max_iterations": 0}}, id="zero-iterations"),
        pytest.param({"llm": {"profiles": {"fast": {"reasoning_effort": "extreme"}}}}, id="bad-effort"),
        pytest.param({"index": {"engine": "lucene"}}, id="unknown-engine"),
        pytest.param({"llm": {"base_urll": "x"}}, id="unknown-key"),
    ],
)
def test_invalid_values_are_rejected(data):
    with pytest.raises(ValidationError):
        Config.model_validate(data)
