"""A model call that waits for a slot says so: `autopilot --teammate-mode` as a separate process
against the fake DeepSeek server process, with `max_inflight = 1` for the model. The first lane's
executor call is held at the server; the second lane's call waits for the model's only slot, and
the CLI shows it as "queued" (why), then "asking" once it goes to the server.

stderr is read by one thread only (it is where the lines come from) and stdout by another:
`communicate()` beside a stderr reader thread took whole chunks of stderr for itself, so lines
("asking", "done", a lane's "step ... done") went missing from what the test saw, mostly under load.
Each lane's `git status` verification runs in the sandbox in its worktree, whose git directory is
in the workspace's `.git/worktrees/` (under /tmp here): it must pass, not "not a git repository"."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from scenario_kit import diff, plan_json, trust_workspace

FIX_ADD = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)
TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])
HELD = {"hold": "executor"}  # whichever lane's call reaches the server first waits there


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_a_call_waiting_for_a_model_slot_shows_queued_then_asking(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]),
                                                            verification=["git status"])},
        {"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD, "fault": HELD},
        {"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE, "fault": HELD},
    ])
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "base")):
        git(workspace, *args)
    user_config = tmp_path / "user.toml"
    user_config.write_text('[models.deepseek-v4-flash]\nmax_inflight = 1\n')
    env = dict(os.environ, DEEPSEEK_BASE_URL=fake.base_url, DEEPSEEK_API_KEY="test-key",
               DEEPSEEK_LS_USER_CONFIG=str(user_config))
    trust_workspace(workspace, env)

    proc = subprocess.Popen([sys.executable, "-m", "deepseek_ls", "autopilot", "--teammate-mode", "Fix add and add triple"],
                            cwd=workspace, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    queued = threading.Event()

    def read_stderr() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line.rstrip("\n"))
            if ": queued for " in line:
                queued.set()

    out_parts: list[str] = []
    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    out_reader = threading.Thread(target=lambda: out_parts.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    out_reader.start()
    try:
        assert queued.wait(120), "\n".join(lines)
        # Queued, not sent: the server has the plan and the one executor call it holds (that call
        # may still be on its way when "queued" is printed: wait for it to arrive, not for time).
        assert [r["role"] for r in fake.wait_for_requests(2, timeout=120)] == ["planner", "executor"]
        fake.release("executor")
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    out_reader.join(10)
    out = "".join(out_parts)
    stderr = "\n".join(lines)
    assert proc.returncode == 0, stderr

    (line,) = [x for x in lines if ": queued for " in x]
    match = re.fullmatch(r"… (lane \d): executor: queued for deepseek-v4-flash: 1 call\(s\) in flight, max_inflight 1",
                         line)
    assert match, line
    lane = match.group(1)
    asking = [i for i, x in enumerate(lines) if x == f"… {lane}: executor: asking deepseek-v4-flash (fast)"]
    assert asking and asking[0] > lines.index(line), stderr  # "asking" once its call starts
    other = "lane 2" if lane == "lane 1" else "lane 1"
    assert f"… {other}: executor: asking deepseek-v4-flash (fast)" in lines  # the first lane never queued
    assert [r["role"] for r in fake.requests()] == ["planner", "executor", "executor"]
    assert "Completed" in out
    for number in (1, 2):
        assert f"lane {number}: verification passed: git status" in "\n".join(lines), stderr
        assert [x for x in lines if x.startswith(f"lane {number}: step ") and x.endswith(" done (1 file(s) changed)")]
    assert not [x for x in lines if "verification failed" in x or "not a git repository" in x], stderr
    (sid,) = re.findall(r"^session (\S+): Completed$", out, re.MULTILINE)
    log = workspace / ".deepseek" / "sessions" / sid / "events.jsonl"
    completed = [e["payload"] for line in log.read_text().splitlines() if line.strip()
                 if (e := json.loads(line))["kind"] == "LaneCompleted@v1"]
    assert [c["verified"] for c in completed] == [True, True]
