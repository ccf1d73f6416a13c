"""The CLI end to end, as separate processes: a run killed while waiting for approval resumes
exactly there with `run --session` (no model call repeated), and `replay --rerun` reproduces it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from scenario_kit import diff, plan_json, trust_workspace

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deepseek_ls", *args]


def env_for(url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(DEEPSEEK_BASE_URL=url, DEEPSEEK_API_KEY="test-key", XDG_CONFIG_HOME=str(Path(env.get("TMPDIR", "/tmp")) / "no-user-config"))
    return env


def wait_for_event(root: Path, kind: str, timeout: float = 120.0) -> str:
    """The session whose log holds a `kind` event, read while the CLI is still writing it: only
    whole lines count (the last one may be half written), and the bound is a hang guard."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for log in (root / ".deepseek" / "sessions").glob("*/events.jsonl"):
            for line in log.read_text().split("\n")[:-1]:
                if line.strip() and json.loads(line)["kind"] == kind:
                    return log.parent.name
        time.sleep(0.1)
    raise TimeoutError(f"no {kind} event within {timeout} s")


def test_run_killed_at_approval_resumes_there_and_replays(workspace, fake_deepseek_process):
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])},
        {"match": {"role": "executor"}, "content": ADD_FIX},
    ])
    env = env_for(fake.base_url)
    first = subprocess.Popen(cli("run", "Fix add"), cwd=workspace, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        sid = wait_for_event(workspace, "ApprovalRequested@v1")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    assert "a - b" in (workspace / "app.py").read_text()
    calls_before = len(fake.requests())

    resumed = subprocess.run(cli("run", "--session", sid[:13]), cwd=workspace, env=env, input="y\n",
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"session {sid}: Completed" in resumed.stdout
    assert "return a + b" in (workspace / "app.py").read_text()
    assert len(fake.requests()) == calls_before  # the staged patch was approved, not re-generated

    events = [json.loads(line) for line in (workspace / ".deepseek" / "sessions" / sid / "events.jsonl").read_text().splitlines()]
    reasons = [e["payload"]["reason"] for e in events if e["kind"] == "SessionStateChanged@v1"]
    assert "resumed after an interruption" in reasons
    approvals = [e["payload"]["request_id"] for e in events if e["kind"] == "ApprovalRequested@v1"]
    assert len(approvals) == 2 and approvals[0] == approvals[1]  # the same pending approval, asked again

    replay = subprocess.run(cli("replay", sid, "--rerun", "--json"), cwd=workspace, env=env,
                            capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    report = json.loads(replay.stdout)
    assert report["ok"] and report["segments"] == 2


def test_plan_json_and_usage_errors(workspace, fake_deepseek_process):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))}])
    out = subprocess.run(cli("plan", "Fix add", "--json"), cwd=workspace, env=env_for(fake.base_url),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["plan"]["steps"][0]["files"] == ["app.py"] and data["routing"]["profile"] == "fast"
    bad = subprocess.run(cli("run"), cwd=workspace, env=env_for(fake.base_url), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "give a request" in bad.stderr


def test_autopilot_applies_without_asking_and_chat_answers(workspace, fake_deepseek_process):
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])},
        {"match": {"role": "executor"}, "content": ADD_FIX},
        {"match": {"role": "chat"}, "content": "It adds two numbers."},
    ])
    env = {**env_for(fake.base_url), "XDG_CONFIG_HOME": str(workspace.parent / "xdg")}
    trust_workspace(workspace, env)  # autopilot runs only in a trusted workspace
    auto = subprocess.run(cli("autopilot", "Fix add", "--max-minutes", "5", "--json"), cwd=workspace, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert auto.returncode == 0, auto.stderr
    view = json.loads(auto.stdout)
    assert view["state"] == "Completed" and view["mode"] == "yolo"
    assert "return a + b" in (workspace / "app.py").read_text()
    assert "approval needed" not in auto.stderr

    chat = subprocess.run(cli("chat"), cwd=workspace, env=env, input="/ask what does add do?\n/quit\n",
                          capture_output=True, text=True, timeout=60)
    assert chat.returncode == 0, chat.stderr
    assert "It adds two numbers." in chat.stdout
    assert [r["role"] for r in fake.requests()][-1] == "chat"
    # Both sessions (autopilot, chat question) re-execute exactly from their logs.
    listed = subprocess.run(cli("sessions", "--json"), cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
    sessions = json.loads(listed.stdout)
    assert len(sessions) == 2
    for summary in sessions:
        replay = subprocess.run(cli("replay", summary["session_id"], "--rerun"), cwd=workspace, env=env,
                                capture_output=True, text=True, timeout=120)
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert "replay reproduced all" in replay.stdout
