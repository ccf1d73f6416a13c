"""The CLI keeps the user informed, end to end (CLI and fake server as separate processes):
cost per call / step / session in `run`, `sessions` and `replay --json`; the `max_cost` budget
pauses; failures leave the session Failed with its error; progress, verification results,
retries and Ctrl-C are announced on stderr; a base URL without a scheme stops before any request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deepseek_ls.testkit.signals import as_a_foreground_command
from scenario_kit import diff, plan_json, trust_workspace

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
FLASH_PRICES = {"cache_hit": 0.5, "cache_miss": 2.0, "output": 8.0}  # per 1M tokens, made up for the test
PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deepseek_ls", *args]


def env_for(url: str, tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(DEEPSEEK_BASE_URL=url, DEEPSEEK_API_KEY="test-key", DEEPSEEK_LS_USER_CONFIG=str(tmp / "no-user.toml"),
               DEEPSEEK_LS_LLM__RETRY_BASE_SECONDS="0.01", DEEPSEEK_LS_LLM__RETRY_MAX_SECONDS="0.05",
               DEEPSEEK_LS_LLM__MAX_RETRIES="1")
    env.update(extra)
    return env


def write_config(tmp: Path, text: str) -> None:
    # The user's config: an untrusted workspace's config cannot set the budget (workspace trust).
    (tmp / "no-user.toml").write_text(text)


PRICED = '[budget.prices."deepseek-v4-flash"]\n' + "".join(f"{k} = {v}\n" for k, v in FLASH_PRICES.items())


def run(workspace: Path, env: dict[str, str], *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    if "yolo" in args:
        trust_workspace(workspace, env)  # yolo runs only in a trusted workspace
    return subprocess.run(cli(*args), cwd=workspace, env=env, input=input, capture_output=True, text=True,
                          timeout=180)


def llm_calls(workspace: Path, sid: str) -> list[dict]:
    lines = (workspace / ".deepseek" / "sessions" / sid / "events.jsonl").read_text().splitlines()
    return [e["payload"] for e in map(json.loads, lines) if e["kind"] == "LLMCall@v1"]


def expected_cost(usage: dict) -> float:
    return (usage["prompt_cache_hit_tokens"] * FLASH_PRICES["cache_hit"]
            + usage["prompt_cache_miss_tokens"] * FLASH_PRICES["cache_miss"]
            + usage["completion_tokens"] * FLASH_PRICES["output"]) / 1e6


def test_cost_per_call_step_and_session_in_run_sessions_and_replay(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN},
                                  {"match": {"role": "executor"}, "content": ADD_FIX}])
    write_config(tmp_path, PRICED)
    env = env_for(fake.base_url, tmp_path)
    done = run(workspace, env, "run", "--mode", "yolo", "Fix add")
    assert done.returncode == 0, done.stderr
    assert "Completed" in done.stdout and "out · $" in done.stdout.split("cost: ")[1]

    (summary,) = json.loads(run(workspace, env, "sessions", "--json").stdout)
    calls = llm_calls(workspace, summary["session_id"])
    assert [c["role"] for c in calls] == ["planner", "executor"]
    usage = [c["usage"] for c in calls]
    assert all(u["prompt_cache_miss_tokens"] > 0 and u["completion_tokens"] > 0 for u in usage)
    cost = summary["cost"]
    assert cost["tokens"] == {
        "cache_hit": sum(u["prompt_cache_hit_tokens"] for u in usage),
        "cache_miss": sum(u["prompt_cache_miss_tokens"] for u in usage),
        "output": sum(u["completion_tokens"] for u in usage),
        "total": sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage),
    }
    assert cost["cost"] == pytest.approx(sum(map(expected_cost, usage)), abs=1e-6)
    assert cost["cost_complete"] and cost["currency"] == "USD"
    listing = run(workspace, env, "sessions").stdout
    assert "Completed" in listing and "out · $" in listing

    replayed = json.loads(run(workspace, env, "replay", summary["session_id"], "--json").stdout)
    step_id = replayed["plans"][0]["steps"][0]["step_id"]
    per_call = {c["role"]: c for c in replayed["cost"]["calls"]}
    assert per_call["planner"]["step_id"] is None and per_call["executor"]["step_id"] == step_id
    assert per_call["executor"]["cost"] == pytest.approx(expected_cost(usage[1]), abs=1e-6)
    assert replayed["cost"]["steps"][step_id]["tokens"]["output"] == usage[1]["completion_tokens"]
    assert replayed["cost"]["session"]["cost"] == pytest.approx(cost["cost"], abs=1e-6)


def test_unknown_prices_show_tokens_and_unknown_cost_never_zero(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN}])
    # A model priced nowhere (no preset, no budget.prices).
    env = env_for(fake.base_url, tmp_path, DEEPSEEK_LS_LLM__PROFILES__FAST__MODEL="my-local-model")
    planned = run(workspace, env, "plan", "Fix add", "--json")
    assert planned.returncode == 0, planned.stderr
    cost = json.loads(planned.stdout)["cost"]["session"]
    assert cost["tokens"]["total"] > 0 and cost["cost"] is None and cost["text"].endswith("unknown")
    (summary,) = json.loads(run(workspace, env, "sessions", "--json").stdout)
    assert summary["cost"]["cost"] is None and summary["cost"]["tokens"]["output"] > 0
    assert "$0" not in run(workspace, env, "sessions").stdout


def test_max_cost_pauses_the_session_before_the_next_call_and_resumes_when_raised(
        workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN},
                                  {"match": {"role": "executor"}, "content": ADD_FIX}])
    write_config(tmp_path, "[budget]\nmax_cost = 0.000001\n" + PRICED)
    env = env_for(fake.base_url, tmp_path)
    paused = run(workspace, env, "run", "--mode", "yolo", "Fix add")
    assert paused.returncode == 0, paused.stderr
    assert "Paused — cost budget reached" in paused.stdout and "max_cost" in paused.stdout
    assert [r["role"] for r in fake.requests()] == ["planner"]  # nothing spent past the budget
    (summary,) = json.loads(run(workspace, env, "sessions", "--json").stdout)
    assert summary["state"] == "Paused" and "budget.max_cost" in summary["state_reason"]
    assert "a - b" in (workspace / "app.py").read_text()

    write_config(tmp_path, "[budget]\nmax_cost = 1.0\n" + PRICED)
    resumed = run(workspace, env, "run", "--session", summary["session_id"])
    assert resumed.returncode == 0, resumed.stderr
    assert f"session {summary['session_id']}: Completed" in resumed.stdout
    assert "return a + b" in (workspace / "app.py").read_text()


@pytest.mark.parametrize(
    ("env_extra", "script", "exit_code", "error_part", "failure"),
    [
        pytest.param({"DEEPSEEK_API_KEY": ""}, [{"content": "never"}], 3, "DEEPSEEK_API_KEY is not set",
                     "AuthError", id="missing-key"),
        pytest.param({}, [{"content": "x", "fault": {"status": 500}, "repeat": True}], 6, "500",
                     "ServerError", id="server-500"),
    ],
)
def test_a_model_failure_leaves_the_session_failed_with_its_error(
        workspace, fake_deepseek_process, tmp_path, env_extra, script, exit_code, error_part, failure):
    fake = fake_deepseek_process(script)
    env = env_for(fake.base_url, tmp_path, **env_extra)
    failed = run(workspace, env, "run", "Fix add")
    assert failed.returncode == exit_code, failed.stderr
    assert error_part in failed.stderr and "resume with: deepseek-ls run --session" in failed.stderr
    (summary,) = json.loads(run(workspace, env, "sessions", "--json").stdout)
    assert summary["state"] == "Failed"
    assert error_part in summary["error"] and summary["last_failure"] == failure
    if failure == "ServerError":
        # Between the retries: which attempt failed and why.
        assert "planner: attempt 1/2 failed: " in failed.stderr and "retrying in" in failed.stderr
    else:
        assert fake.requests() == []


def test_a_failed_session_resumes_once_the_cause_is_fixed(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN},
                                  {"match": {"role": "executor"}, "content": ADD_FIX}])
    failed = run(workspace, env_for(fake.base_url, tmp_path, DEEPSEEK_API_KEY=""), "run", "--mode", "yolo", "Fix add")
    assert failed.returncode == 3
    (summary,) = json.loads(run(workspace, env_for(fake.base_url, tmp_path), "sessions", "--json").stdout)
    resumed = run(workspace, env_for(fake.base_url, tmp_path), "run", "--session", summary["session_id"])
    assert resumed.returncode == 0, resumed.stderr
    assert "Completed" in resumed.stdout
    (after,) = json.loads(run(workspace, env_for(fake.base_url, tmp_path), "sessions", "--json").stdout)
    assert after["state"] == "Completed" and after["error"] is None


def test_progress_and_each_verification_are_announced_without_stream(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN, "chunk_chars": 8},
                                  {"match": {"role": "executor"}, "content": ADD_FIX}])
    done = run(workspace, env_for(fake.base_url, tmp_path), "run", "--mode", "yolo", "Fix add")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "… planner: asking deepseek-v4-flash" in err
    planner_done = next(line for line in err.splitlines() if line.startswith("planner: done ("))
    assert "tokens)" in planner_done and "s, " in planner_done  # elapsed and tokens streamed
    assert "… verifying: python -m pytest -q -k add" in err
    assert "verification passed: python -m pytest -q -k add" in err
    assert "\r" not in err  # not a terminal: plain lines only


def test_a_failing_verification_is_announced_with_its_result(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q"])},
        {"match": {"role": "executor"}, "content": ADD_FIX},
        {"match": {"role": "planner"}, "content": PLAN, "repeat": True},
        {"match": {"role": "executor"}, "content": "NO_CHANGE|nothing more", "repeat": True},
    ])
    env = env_for(fake.base_url, tmp_path, DEEPSEEK_LS_AGENT_LOOP__MAX_ITERATIONS="1")
    result = run(workspace, env, "run", "--mode", "yolo", "Fix add")
    assert "verification failed: `python -m pytest -q`" in result.stderr, result.stderr
    assert "failed" in result.stderr.split("verification failed: `python -m pytest -q`")[1].splitlines()[0]



def test_ctrl_c_pauses_and_says_how_to_resume(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "planner"}, "content": PLAN,
                                   "fault": {"delay_before_first_byte": 60}}])
    proc = subprocess.Popen(cli("run", "Fix add"), cwd=workspace, env=env_for(fake.base_url, tmp_path),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=as_a_foreground_command)
    try:
        deadline = time.monotonic() + 60
        while not fake.requests() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake.requests(), "the planner call never reached the server"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted; the session is paused; resume with: deepseek-ls run --session" in err
    (summary,) = json.loads(run(workspace, env_for(fake.base_url, tmp_path), "sessions", "--json").stdout)
    assert summary["state"] == "Paused"


@pytest.mark.parametrize("url", [pytest.param("localhost:8080/v1", id="host-port"),
                                 pytest.param("api.deepseek.com", id="bare-host")])
def test_a_base_url_without_a_scheme_is_a_config_error_before_any_request(workspace, tmp_path, url):
    for args in (("ask", "hi"), ("run", "Fix add")):
        result = run(workspace, env_for(url, tmp_path), *args)
        assert result.returncode == 2, result.stderr
        assert "not an http(s) URL" in result.stderr and "http://" in result.stderr
    assert not (workspace / ".deepseek" / "sessions").exists() or not any((workspace / ".deepseek" / "sessions").iterdir())


def test_index_status_says_what_to_run(workspace, tmp_path):
    env = env_for("http://127.0.0.1:9", tmp_path)
    missing = run(workspace, env, "index", "status")
    assert missing.returncode == 1 and "run: deepseek-ls index build" in missing.stderr
    assert run(workspace, env, "index", "build").returncode == 0
    (workspace / "util.py").write_text("def double(x):\n    return 2 * x\n")
    stale = run(workspace, env, "index", "status")
    assert stale.returncode == 1 and "run: deepseek-ls index update" in stale.stderr
