"""Scenario fixtures: a small Python workspace, a real Agent wired to the fake DeepSeek server.

Nothing of ours is mocked: the LLM client talks HTTP to the fake server on
loopback, patches are staged and applied by the real PatchStore, verification
runs real commands, events land in a real event log.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.agent import Agent
from deepseek_ls.agent.replay import replay_session
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

APP = '''def greet(name):
    return "Hello " + name


def add(a, b):
    return a - b
'''

TEST_APP = '''from app import add, greet


def test_greet():
    assert greet("Ada") == "Hello, Ada!"


def test_add():
    assert add(2, 3) == 5
'''

UTIL = '''def double(x):
    return x * 2
'''


class ScriptedUI:
    """A UIPort that answers approvals and questions from lists, and records what it was asked."""

    def __init__(self, approvals: list[str] | None = None, answers: list[str | None] | None = None) -> None:
        self.approval_answers = list(approvals or [])
        self.answers = list(answers or [])
        self.approvals: list[ApprovalRequest] = []
        self.questions: list[str] = []
        self.streamed: list[tuple[str, str]] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        answer = self.approval_answers.pop(0) if self.approval_answers else "allow_once"
        return ApprovalDecision(request_id=request.request_id, answer=answer)  # type: ignore[arg-type]

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None

    def stream(self, channel, text, *, session_id=None) -> None:
        self.streamed.append((channel, text))

    def progress(self, token, message, percentage=None, *, done=False) -> None:
        return None


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
    return root


def scenario_config() -> Config:
    cfg = Config()
    cfg.index.enabled = False
    cfg.llm.stream = True
    cfg.llm.max_retries = 0
    return cfg


@pytest.fixture
async def make_agent(workspace: Path, fake_deepseek):
    """Builds the agent; afterwards every session the test made must replay exactly (no tool re-run)."""
    made: list[tuple[Agent, Config]] = []

    def make(ui: Any = None, config: Config | None = None) -> Agent:
        cfg = config or scenario_config()
        agent = Agent(workspace, cfg, llm=LLMClient(cfg.llm), ui=ui or ScriptedUI())
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


def plan_json(*steps: tuple[str, list[str]], verification: list[str] | None = None, confidence: float = 0.9) -> str:
    body = {
        "goal": "scenario goal",
        "assumptions": [],
        "steps": [{"title": t, "intent": "edit", "files": f} for t, f in steps],
        "verification": verification if verification is not None else ["python -m pytest -q"],
        "risk_notes": [],
        "confidence": confidence,
    }
    return "```json\n" + json.dumps(body) + "\n```"


def diff(path: str, old: list[str], new: list[str], start: int = 1) -> str:
    lines = [f"--- a/{path}", f"+++ b/{path}", f"@@ -{start},{len(old)} +{start},{len(new)} @@"]
    lines += [f"-{line}" for line in old] + [f"+{line}" for line in new]
    return "```diff\n" + "\n".join(lines) + "\n```"


def kinds(agent: Agent, session_id: str) -> list[str]:
    return [e.kind for e in agent.store.open(session_id).read()]


def states(agent: Agent, session_id: str) -> list[str]:
    return [e.payload["to_state"] for e in agent.store.open(session_id).read() if e.kind == "SessionStateChanged@v1"]

