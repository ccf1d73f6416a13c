"""Helpers shared by the scenario tests: the workspace's files, a scripted UI, script builders.

A plain module (not conftest) so tests import it by a name no other test directory uses.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepseek_ls.agent import Agent
from deepseek_ls.config_models import Config
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

# app.py as a change under review leaves it (tests/scenarios/test_*review*.py): add fixed oddly, mul added.
APP_CHANGED = '''def greet(name):
    return "Hello " + name


def add(a, b):
    return a + b - 0


def mul(a, b):
    return a * b
'''

UTIL = '''def double(x):
    return x * 2
'''


def write_app(root: Path) -> Path:
    """`root` as the small Python project the scenarios change: app.py, its test, pytest.ini."""
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    return root


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


def scenario_config() -> Config:
    cfg = Config()
    cfg.index.enabled = False
    cfg.llm.stream = True
    cfg.llm.max_retries = 0
    return cfg


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


def git(root: Path, *args: str) -> str:
    """git in `root` with a committer identity (tests run without one)."""
    import subprocess

    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def kinds(agent: Agent, session_id: str) -> list[str]:
    return [e.kind for e in agent.store.open(session_id).read()]


def states(agent: Agent, session_id: str) -> list[str]:
    return [e.payload["to_state"] for e in agent.store.open(session_id).read() if e.kind == "SessionStateChanged@v1"]


def trust_workspace(workspace: "Path", env: dict[str, str]) -> None:
    """`deepseek-ls trust` for `workspace`, in the user config dir `env` points at (yolo needs it)."""
    from deepseek_ls.config import ENV_USER_CONFIG
    from deepseek_ls.trust import TrustStore, trust_file

    if env.get(ENV_USER_CONFIG):
        user = Path(env[ENV_USER_CONFIG])
    else:  # platformdirs reads XDG_CONFIG_HOME from this process's environment, not `env`
        user = Path(env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    TrustStore(trust_file(user)).trust(workspace)
