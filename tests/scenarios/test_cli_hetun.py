"""`deepseek-ls run --hetun` as a separate process against the fake server process: research fan-out,
the mission card printed and answered on stdin, the approved run applied and verified, and
`replay --rerun` reproducing it; a research budget stops with a clear message; `--mode hetun` and
Modify work from the terminal too."""

from __future__ import annotations

import json
import subprocess

from scenario_kit import diff, plan_json
from test_cli_resume import cli, env_for

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


def replies(*, modified: bool = False) -> list[dict]:
    out = [
        {"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\nSLICE|util.py\n"},
        {"match": {"role": "hetun.sub", "contains": "Slice: app.py"},
         "content": "FINDING|0.9|app.py:6 add returns a - b\nFOLLOWUP|tests/test_app.py|the failing test\n"},
        {"match": {"role": "hetun.sub", "contains": "Slice: util.py"}, "content": "NOTHING"},
        {"match": {"role": "hetun.sub", "contains": "Slice: tests/test_app.py"},
         "content": "FINDING|0.8|tests/test_app.py:9 expects add(2, 3) == 5\n"},
        {"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"},
        {"match": {"role": "planner", "contains": "Request:"},
         "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])},
        {"match": {"role": "executor"}, "content": ADD_FIX},
    ]
    if modified:
        out.insert(-1, {"match": {"role": "planner", "contains": "modified the mission"},
                        "content": plan_json(("Fix add, nothing else", ["app.py"]), verification=["python -m pytest -q -k add"])})
    return out


def events(workspace, sid: str) -> list[dict]:
    log = workspace / ".deepseek" / "sessions" / sid / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_cli_hetun_research_mission_approve_verify_and_replay(workspace, fake_deepseek_process):
    fake = fake_deepseek_process(replies())
    env = env_for(fake.base_url)
    done = subprocess.run(cli("run", "--hetun", "Fix add in app.py", "--json"), cwd=workspace, env=env,
                          input="approve\n", capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["state"] == "Completed" and view["mode"] == "hetun"
    assert "return a + b" in (workspace / "app.py").read_text()
    assert "# Mission v1: scenario goal" in done.stderr and "## Estimate" in done.stderr
    assert "Approve this mission?" in done.stderr
    roles = [r["role"] for r in fake.requests()]
    assert roles.count("hetun.sub") == 3 and "hetun.crosscheck" in roles
    nodes = view["hetun"]["research"]["nodes"]
    assert [n["target"] for n in nodes if n["kind"] == "followup"] == ["tests/test_app.py"]

    replay = subprocess.run(cli("replay", view["session_id"], "--rerun", "--json"), cwd=workspace, env=env,
                            capture_output=True, text=True, timeout=120)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    report = json.loads(replay.stdout)
    assert report["ok"], report["message"]
    kinds = [e["kind"] for e in events(workspace, view["session_id"])]
    assert kinds.count("HetunSubQuery@v1") == len(nodes) and "MissionCheckpoint@v1" in kinds


def test_cli_hetun_modify_then_approve(workspace, fake_deepseek_process):
    fake = fake_deepseek_process(replies(modified=True))
    done = subprocess.run(cli("run", "--mode", "hetun", "Fix add in app.py", "--json"), cwd=workspace,
                          env=env_for(fake.base_url), input="modify\nFix add, nothing else\napprove\n",
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["state"] == "Completed" and view["hetun"]["mission"]["version"] == 2
    assert "# Mission v2" in done.stderr and "return a + b" in (workspace / "app.py").read_text()


def test_cli_hetun_budget_stops_research_with_a_clear_message(workspace, fake_deepseek_process):
    fake = fake_deepseek_process(replies())
    env = {**env_for(fake.base_url), "DEEPSEEK_LS_HETUN__MAX_SUBQUERIES": "2"}
    done = subprocess.run(cli("run", "--hetun", "Fix add in app.py", "--json"), cwd=workspace, env=env,
                          input="reject\n", capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Hetun research stopped: 2 of 2 sub-queries used (hetun.max_subqueries)" in done.stderr
    view = json.loads(done.stdout)
    assert view["hetun"]["research"]["budget_hit"] == "max_subqueries"
    assert view["hetun"]["decision"] == "reject" and "return a - b" in (workspace / "app.py").read_text()
    assert [r["role"] for r in fake.requests()].count("hetun.sub") == 1
