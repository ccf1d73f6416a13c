"""`deepseek-ls autopilot --teammate-mode` and `run --teammate-mode` as separate processes against the
fake DeepSeek server process, in a git repository: the independent steps run in lanes, the CLI
says so, the result is merged, nothing is left behind, and `replay --rerun` reproduces it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from scenario_kit import diff, plan_json, trust_workspace

FIX_ADD = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)
TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deepseek_ls", *args]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


def script() -> list[dict]:
    return [
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]),
                                                            verification=["git status"])},
        {"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD},
        {"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE},
    ]


def setup(workspace: Path, url: str, tmp_path: Path) -> dict[str, str]:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    env = dict(os.environ)
    env.update(DEEPSEEK_BASE_URL=url, DEEPSEEK_API_KEY="test-key", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    return env


def kinds(workspace: Path, sid: str) -> list[str]:
    log = workspace / ".deepseek" / "sessions" / sid / "events.jsonl"
    return [json.loads(line)["kind"] for line in log.read_text().splitlines() if line.strip()]


def test_autopilot_with_teammate_mode_runs_lanes_and_replays(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process(script())
    env = setup(workspace, fake.base_url, tmp_path)
    trust_workspace(workspace, env)
    done = subprocess.run(cli("autopilot", "--teammate-mode", "--json", "Fix add and add triple"), cwd=workspace,
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["state"] == "Completed"
    assert [lane["state"] for lane in view["lanes"]["lanes"]] == ["merged", "merged"]
    assert "lane 1: step 'Fix add' started" in done.stderr and "lane 2: step 'Add triple' started" in done.stderr
    assert "return a + b" in (workspace / "app.py").read_text() and "def triple" in (workspace / "util.py").read_text()
    events = kinds(workspace, view["session_id"])
    assert events.count("LaneStarted@v1") == 2 and events.count("LaneMerged@v1") == 2
    assert git(workspace, "branch", "--list", "lane/*").strip() == ""
    sessions = subprocess.run(cli("sessions", "--json"), cwd=workspace, env=env, capture_output=True, text=True,
                              timeout=60)
    for summary in json.loads(sessions.stdout):  # the run and its two lanes
        replay = subprocess.run(cli("replay", summary["session_id"], "--rerun"), cwd=workspace, env=env,
                                capture_output=True, text=True, timeout=120)
        assert replay.returncode == 0, replay.stdout + replay.stderr


def test_run_with_teammate_mode_prints_the_lanes_in_its_summary(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process(script())
    env = setup(workspace, fake.base_url, tmp_path)
    done = subprocess.run(cli("run", "--teammate-mode", "Fix add and add triple"), cwd=workspace, env=env,
                          input="y\ny\n", capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "lane 1 (merged): Fix add" in done.stdout and "lane 2 (merged): Add triple" in done.stdout
    assert "Completed" in done.stdout
