"""Configuration files of the allowlisted tools themselves always need an explicit approval.

`pytest -q`, `mypy` and `ruff check` run unprompted as verification. What they do is decided
by files the model can write with a patch: pytest 9 reads `pytest.toml` (before `pytest.ini`),
`.pytest.toml` and `.pytest.ini` (`addopts = ["-p", "evil"]`, `--junitxml=src/app.py`); mypy
loads the plugins `mypy.ini` names, coverage those `.coveragerc` names; `ruff.toml` with
`fix = true` makes `ruff check` rewrite files. After "always allow" (or in `auto` mode) a patch
creating one still stops at an approval showing it; denied, nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, make_workspace
from test_no_unapproved_exec_config_files import _host, _new_file_diff, _stage

from deepseek_ls.agent.world import World

TOOL_CONFIG_FILES = [
    pytest.param("pytest.toml", '[pytest]\naddopts = ["--junitxml=src/app.py"]', id="pytest-toml"),
    pytest.param(".pytest.toml", '[pytest]\naddopts = ["-p", "evil"]', id="dot-pytest-toml"),
    pytest.param("sub/.pytest.ini", "[pytest]\naddopts = -p evil", id="dot-pytest-ini"),
    pytest.param("mypy.ini", "[mypy]\nplugins = evil", id="mypy-ini"),
    pytest.param(".mypy.ini", "[mypy]\nplugins = evil", id="dot-mypy-ini"),
    pytest.param(".coveragerc", "[run]\nplugins = evil", id="coveragerc"),
    pytest.param("ruff.toml", "fix = true\nunsafe-fixes = true", id="ruff-toml"),
    pytest.param(".ruff.toml", "fix = true", id="dot-ruff-toml"),
    pytest.param("PYTEST.TOML", '[pytest]\naddopts = ["-p", "evil"]', id="case-folded"),
]


@pytest.mark.parametrize(("path", "content"), TOOL_CONFIG_FILES)
async def test_no_unapproved_exec_tool_config_file_in_auto_mode(tmp_path: Path, path: str, content: str) -> None:
    root, canaries = make_workspace(tmp_path)
    ui = RecordingUI("deny")
    host = _host(root, ui, mode="auto")
    staged = await _stage(host, _new_file_diff(path, content))
    assert staged["approval_required"] and staged["exec_config_files"] == [path]
    out = await host.call("patch.apply", {"patch_id": staged["patch_id"]})
    assert not out.ok and "denied" in out.error
    assert len(ui.approvals) == 1 and content.split("\n")[0] in ui.approvals[0].detail
    assert not (root / path).exists()
    canaries.assert_intact(state=False)


async def test_pytest_toml_is_what_pytest_reads_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why `pytest.toml` is on the list: beside an existing `pytest.ini`, pytest takes its addopts
    (here a --junitxml over a user file), so an unasked patch would decide what `pytest -q` does."""
    root, canaries = make_workspace(tmp_path)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":" + __import__("os").environ["PATH"])
    ui = RecordingUI("allow_once")
    host = _host(root, ui, mode="suggest")
    staged = await _stage(host, _new_file_diff("pytest.toml", '[pytest]\npythonpath = ["."]\naddopts = ["--junitxml=src/app.py"]'))
    assert (await host.call("patch.apply", {"patch_id": staged["patch_id"]})).ok  # an explicit yes
    world = World(root, host.config, sink=host.sink, overlay=host.overlay, patches=None, tools=host)
    result = await world.run_command("pytest -q", 60)
    assert result.exit_code == 0, result.output
    assert (root / "src" / "app.py").read_text().startswith("<?xml"), "pytest did not read pytest.toml"
    canaries.assert_intact(state=False)
