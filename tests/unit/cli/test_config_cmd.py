"""`deepseek-ls config show|path|edit` as a user runs them (subprocess, isolated config dirs)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path


def test_config_show_works_in_an_empty_directory(run_cli, empty_dir):
    result = run_cli("config", "show")
    assert result.returncode == 0, result.stderr
    assert f"# workspace: {empty_dir}" in result.stdout
    assert "router.threshold_high = 0.72" in result.stdout
    assert "# default" in result.stdout
    assert "not set" in result.stdout  # the API key
    assert not (empty_dir / ".deepseek").exists(), "show does not create state"


def test_config_show_json_gives_values_and_sources(run_cli, empty_dir):
    (empty_dir / ".deepseek").mkdir()
    (empty_dir / ".deepseek" / "config.toml").write_text("[router]\nthreshold_high = 0.6\n")
    result = run_cli("config", "show", "--json", env={"DEEPSEEK_LS_INDEX__ENABLED": "false"})
    data = json.loads(result.stdout)
    assert data["config"]["router"]["threshold_high"] == 0.6
    assert data["sources"]["router.threshold_high"].endswith(".deepseek/config.toml")
    assert data["config"]["index"]["enabled"] is False
    assert data["sources"]["index.enabled"] == "env DEEPSEEK_LS_INDEX__ENABLED"
    assert data["sources"]["llm.base_url"] == "default"


def test_config_show_masks_the_api_key(run_cli):
    secret = "sk-verysecretvalue1234"
    for args in (("config", "show"), ("config", "show", "--json")):
        result = run_cli(*args, env={"DEEPSEEK_API_KEY": secret})
        assert secret not in result.stdout + result.stderr
        assert "set (...1234)" in result.stdout


def test_a_bad_config_value_fails_with_file_key_and_reason(run_cli, empty_dir):
    path = empty_dir / ".deepseek" / "config.toml"
    path.parent.mkdir()
    path.write_text('[policy]\napproval_mode = "sometimes"\n')
    result = run_cli("config", "show")
    assert result.returncode == 2
    assert str(path) in result.stderr
    assert "policy.approval_mode" in result.stderr
    assert "suggest" in result.stderr  # the reason lists what is allowed
    assert path.read_text() == '[policy]\napproval_mode = "sometimes"\n'


def test_global_flags_work_before_and_after_the_command(run_cli, empty_dir, tmp_path):
    extra = tmp_path / "extra.toml"
    extra.write_text("[router]\nthreshold_high = 0.42\n")
    before = run_cli("--config", str(extra), "config", "show", "--json")
    after = run_cli("config", "show", "--json", "--config", str(extra))
    for result in (before, after):
        assert json.loads(result.stdout)["config"]["router"]["threshold_high"] == 0.42


def test_profile_flag_selects_a_profile_for_the_run(run_cli):
    result = run_cli("--profile", "max_think", "config", "show", "--json")
    data = json.loads(result.stdout)
    assert data["config"]["llm"]["profiles"]["fast"]["model"] == "deepseek-v4-pro"
    assert data["sources"]["llm.profiles.fast.model"] == "--profile max_think"
    missing = run_cli("--profile", "nope", "config", "show")
    assert missing.returncode == 2 and "no profile named 'nope'" in missing.stderr


def test_workspace_flag_points_at_another_directory(run_cli, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    result = run_cli("--workspace", str(other), "config", "show")
    assert f"# workspace: {other}" in result.stdout
    bad = run_cli("--workspace", str(tmp_path / "missing"), "config", "show")
    assert bad.returncode == 2 and "not a directory" in bad.stderr


def test_config_path_prints_user_and_workspace_paths(run_cli, empty_dir, cli_env):
    result = run_cli("config", "path", "--json")
    data = json.loads(result.stdout)
    assert data["workspace"] == {"path": str(empty_dir / ".deepseek" / "config.toml"), "exists": False}
    assert data["user"]["path"] == str(Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml")


def test_config_edit_creates_commented_defaults_and_validates(run_cli, empty_dir):
    result = run_cli("config", "edit", env={"EDITOR": "true", "VISUAL": ""})
    assert result.returncode == 0, result.stderr
    path = empty_dir / ".deepseek" / "config.toml"
    text = path.read_text()
    assert "# threshold_high = 0.72" in text
    assert tomllib.loads(text) == {}  # every default is commented out
    # Uncommenting a line gives a valid config with that value.
    path.write_text(text.replace("# threshold_high = 0.72", "threshold_high = 0.5").replace(
        "# [router]\n", "[router]\n", 1))
    shown = json.loads(run_cli("config", "show", "--json").stdout)
    assert shown["config"]["router"]["threshold_high"] == 0.5


def test_config_edit_reports_an_invalid_result_and_keeps_the_file(run_cli, empty_dir, tmp_path):
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "[router]\\nthreshold_high = -3\\n" > "$1"\n')
    editor.chmod(0o755)
    result = run_cli("config", "edit", env={"EDITOR": str(editor), "VISUAL": ""})
    assert result.returncode == 2
    assert "router.threshold_high" in result.stderr
    assert (empty_dir / ".deepseek" / "config.toml").read_text() == "[router]\nthreshold_high = -3\n"


def test_path_and_edit_work_when_the_workspace_config_is_broken(run_cli, empty_dir, tmp_path):
    path = empty_dir / ".deepseek" / "config.toml"
    path.parent.mkdir()
    path.write_text("[router\n")
    assert run_cli("config", "show").returncode == 2
    located = run_cli("config", "path")
    assert located.returncode == 0 and str(path) in located.stdout
    editor = tmp_path / "fix.sh"
    editor.write_text('#!/bin/sh\nprintf "[router]\\nthreshold_high = 0.5\\n" > "$1"\n')
    editor.chmod(0o755)
    fixed = run_cli("config", "edit", env={"EDITOR": str(editor), "VISUAL": ""})
    assert fixed.returncode == 0, fixed.stderr
    assert json.loads(run_cli("config", "show", "--json").stdout)["config"]["router"]["threshold_high"] == 0.5
