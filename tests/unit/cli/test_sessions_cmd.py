"""`deepseek-ls sessions` and `replay ID --json` over a real event store."""

from __future__ import annotations

import json

from deepseek_ls.store.sessions import SessionStore


def make_session(root, prompt: str) -> str:
    store = SessionStore(root / ".deepseek")
    with store.create(root, "agent", prompt) as log:
        log.append("TurnAdded@v1", {"role": "user", "content": prompt})
        log.append("PlanCreated@v1", {"plan": {"plan_id": "p", "goal": prompt,
                                               "steps": [{"step_id": "s1", "title": "do"}]}})
        log.append("StepMarked@v1", {"plan_id": "p", "step_id": "s1", "status": "done"})
        return log.session_id


def test_sessions_in_an_empty_workspace(run_cli):
    result = run_cli("sessions")
    assert result.returncode == 0
    assert "no sessions yet" in result.stderr
    assert json.loads(run_cli("sessions", "--json").stdout) == []


def test_sessions_lists_newest_first(run_cli, empty_dir):
    first = make_session(empty_dir, "first task")
    second = make_session(empty_dir, "second task")
    rows = json.loads(run_cli("sessions", "--json").stdout)
    assert [r["session_id"] for r in rows] == [second, first]
    assert rows[0]["event_count"] == 4
    text = run_cli("sessions").stdout
    assert text.index(second) < text.index(first)
    assert "second task" in text


def test_replay_json_prints_the_rebuilt_projections(run_cli, empty_dir):
    sid = make_session(empty_dir, "rename foo")
    result = run_cli("replay", sid[:12], "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["session"]["session_id"] == sid
    assert data["transcript"][0]["content"] == "rename foo"
    assert data["plans"][0]["steps"][0]["status"] == "done"
    human = run_cli("replay", sid)
    assert "[done] do" in human.stdout


def test_replay_of_an_unknown_session_is_a_clear_error(run_cli):
    result = run_cli("replay", "0123abcd")
    assert result.returncode == 1
    assert "no session '0123abcd'" in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_rerun_reports_divergence_from_the_recording(run_cli, empty_dir):
    # A hand-made plan that no recorded agent request explains: re-execution cannot
    # reproduce it, and the report names the event.
    sid = make_session(empty_dir, "hand made")
    result = run_cli("replay", sid, "--rerun", "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert report["ok"] is False and "PlanCreated@v1" in report["message"]

    with SessionStore(empty_dir / ".deepseek").create(empty_dir, "plan", "nothing happened") as log:
        quiet = log.session_id
    result = run_cli("replay", quiet, "--rerun")
    assert result.returncode == 0, result.stderr
    assert "reproduced all 0 decisions" in result.stdout


def test_sessions_rebuild_restores_projections_from_the_logs(run_cli, empty_dir):
    import sqlite3

    sid = make_session(empty_dir, "task")
    assert json.loads(run_cli("sessions", "--json").stdout)[0]["event_count"] == 4
    db = sqlite3.connect(empty_dir / ".deepseek" / "state.db")
    db.execute("UPDATE sessions SET state='Bogus', event_count=99")
    db.commit()
    db.close()
    assert json.loads(run_cli("sessions", "--json").stdout)[0]["state"] == "Bogus"
    rows = json.loads(run_cli("sessions", "--rebuild", "--json").stdout)
    assert [(r["session_id"], r["state"], r["event_count"]) for r in rows] == [(sid, "Idle", 4)]


def test_a_real_ask_session_is_listed_and_replayed_from_its_log(run_cli, fake_deepseek):
    # End to end: `ask` talks HTTP to the fake DeepSeek server and records its session;
    # `sessions` and `replay` read it back from the event log.
    fake_deepseek.add({"content": "It is loaded in config.py."})
    env = {"DEEPSEEK_BASE_URL": fake_deepseek.base_url, "DEEPSEEK_API_KEY": "test-key"}
    asked = run_cli("ask", "where is the config loaded?", env=env)
    assert asked.returncode == 0, asked.stderr

    (row,) = json.loads(run_cli("sessions", "--json").stdout)
    assert (row["prompt"], row["state"]) == ("where is the config loaded?", "Completed")
    replayed = json.loads(run_cli("replay", row["session_id"], "--json").stdout)
    assert [(t["role"], t["content"]) for t in replayed["transcript"]] == [
        ("user", "where is the config loaded?"), ("assistant", "It is loaded in config.py.")]
    (call,) = replayed["llm_calls"]
    assert call["role"] == row["mode"]
    assert "test-key" not in (run_cli("replay", row["session_id"], "--json").stdout)


def _with_a_call(root) -> str:
    store = SessionStore(root / ".deepseek")
    with store.create(root, "agent", "priced") as log:
        log.append("TurnAdded@v1", {"role": "user", "content": "priced"})
        log.append("LLMCall@v1", {"call_id": "c1", "role": "planner", "profile": "fast", "model": "deepseek-v4-flash",
                                  "request_hash": "h", "usage": {"prompt_tokens": 1000, "completion_tokens": 200,
                                                                 "prompt_cache_hit_tokens": 600,
                                                                 "prompt_cache_miss_tokens": 400}})
        return log.session_id


def test_sessions_prices_recorded_calls_from_the_config(run_cli, empty_dir, cli_env):
    # The config is loaded only to price calls (start-up): a session with one still gets its cost.
    sid = _with_a_call(empty_dir)
    (row,) = json.loads(run_cli("sessions", "--json").stdout)
    cost = row["cost"]
    assert row["session_id"] == sid and cost["calls"] == 1 and cost["unpriced_calls"] == 0, cost
    assert cost["cost"] is not None and cost["cost"] > 0 and "$" in cost["text"], cost


def test_sessions_reports_a_bad_config_when_it_prices_a_call(run_cli, empty_dir, cli_env):
    from pathlib import Path

    user = Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[router]\nthreshold_high = 'high'\n")
    make_session(empty_dir, "no call")
    listed = run_cli("sessions")  # nothing to price: the config is not read
    assert listed.returncode == 0 and "no call" in listed.stdout, listed.stderr
    _with_a_call(empty_dir)
    priced = run_cli("sessions")
    assert priced.returncode != 0 and "threshold_high" in priced.stderr and "Traceback" not in priced.stderr
