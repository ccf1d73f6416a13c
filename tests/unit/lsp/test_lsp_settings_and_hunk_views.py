"""Editor settings validation and hunk location in a moved buffer."""

from __future__ import annotations

import pytest

from deepseek_ls.config_models import Config
from deepseek_ls.lsp.hunk_views import locate
from deepseek_ls.lsp.settings import Settings, SettingsError


def test_settings_layer_over_the_base_and_accept_the_vscode_section() -> None:
    settings = Settings(Config())
    config = settings.apply({"deepseek": {"router": {"threshold_high": 0.9}}})
    assert config.router.threshold_high == 0.9
    config = settings.apply({"index": {"enabled": False}})
    assert config.router.threshold_high == 0.9 and config.index.enabled is False


@pytest.mark.parametrize(
    "options, key",
    [
        pytest.param({"router": {"threshold_high": "high"}}, "router.threshold_high", id="wrong-type"),
        pytest.param({"routre": {}}, "routre", id="unknown-section"),
        pytest.param({"policy": {"approval_mode": "sometimes"}}, "policy.approval_mode", id="bad-literal"),
        pytest.param(["not", "an", "object"], "object", id="not-an-object"),
    ],
)
def test_a_bad_setting_names_the_key_and_keeps_the_previous_config(options, key) -> None:
    settings = Settings(Config())
    settings.apply({"router": {"threshold_high": 0.8}})
    with pytest.raises(SettingsError, match=key.replace(".", r"\.")):
        settings.apply(options)
    assert settings.config.router.threshold_high == 0.8


def test_locate_prefers_the_occurrence_nearest_the_staged_position() -> None:
    lines = ["x\n", "y\n"] * 10
    assert locate(lines, ["x\n", "y\n"], 7) in (6, 8)
    assert locate(lines, ["x\n", "y\n"], 8) == 8
    assert locate(lines, ["z\n"], 3) is None
    assert locate(lines, [], 50) == 20
