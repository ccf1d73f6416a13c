"""Scenario fixtures: a small Python workspace, a real Agent wired to the fake DeepSeek server,
built by `build_agent` as the language server, ACP and the CLI build it.

Nothing of ours is mocked: the LLM client talks HTTP to the fake server on
loopback, patches are staged and applied by the real PatchStore, verification
runs real commands, events land in a real event log.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.agent import Agent
from deepseek_ls.agent.assemble import build_agent
from deepseek_ls.agent.replay import replay_session
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from scenario_kit import APP, TEST_APP, UTIL, ScriptedUI, scenario_config  # noqa: F401

@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "util.py").write_text(UTIL)
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    # Verification runs `python -m pytest`: the venv's python must come first on PATH.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    # ... without the venv's autoloaded third-party plugins, which this workspace's tests do not use
    # (pytest-lsp's import alone made each verification run seconds longer).
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return root


@pytest.fixture
async def make_agent(workspace: Path, fake_deepseek):
    """Builds the agent; afterwards every session the test made must replay exactly (no tool re-run)."""
    made: list[tuple[Agent, Config]] = []

    def make(ui: Any = None, config: Config | None = None, **agent_args: Any) -> Agent:
        cfg = config or scenario_config()
        agent_args.setdefault("index", None)  # no index unless the test gives one
        agent = build_agent(workspace, cfg, llm=LLMClient(cfg.llm), ui=ui or ScriptedUI(), **agent_args)
        made.append((agent, cfg))
        return agent

    yield make
    for agent, _ in made:
        await agent.llm.aclose()
    if not made:
        return
    agent, cfg = made[0]
    before = {p: p.read_bytes() for p in workspace.rglob("*.py")}
    fake_deepseek.stop()  # replay must not need the model
    for summary in agent.store.list():
        report = await replay_session(workspace, agent.state_dir, cfg, summary.session_id)
        assert report.ok, report.message
        assert report.compared > 0
    assert {p: p.read_bytes() for p in workspace.rglob("*.py")} == before, "replay touched the workspace"
