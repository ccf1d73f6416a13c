"""`deepseek-ls ask` end to end: the CLI as a subprocess against the fake server as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.workspace import state_dir


@pytest.fixture
def ask(tmp_path: Path, user_config_home: Path):
    """Run `deepseek-ls ask ...` in an isolated workspace; returns CompletedProcess. The CLI runs
    as this test's user (`user_config_home`), so the sessions it records are ours here too."""
    workspace = tmp_path / "ws"
    workspace.mkdir()

    def run(*args: str, base_url: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
        environment = {
            **os.environ,
            "DEEPSEEK_BASE_URL": base_url,
            "DEEPSEEK_API_KEY": "test-key",
            "XDG_CONFIG_HOME": str(user_config_home),
            "DEEPSEEK_LS_LLM__RETRY_BASE_SECONDS": "0.01",
            "DEEPSEEK_LS_LLM__RETRY_MAX_SECONDS": "0.05",
            "DEEPSEEK_LS_LLM__MAX_RETRIES": "1",
            **env,
        }
        return subprocess.run(
            [sys.executable, "-m", "deepseek_ls", "--workspace", str(workspace), "ask", *args],
            input=stdin, capture_output=True, text=True, env=environment, timeout=60,
        )

    run.workspace = workspace
    return run


def test_ask_streams_the_scripted_answer_to_stdout(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"match": {"role": "ask", "contains": "hi"},
                                   "content": "Hello! How can I help?", "reasoning_content": "A greeting."}])
    result = ask("hi", base_url=fake.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello! How can I help?\n"
    assert "A greeting." not in result.stderr
    (request,) = fake.requests()
    assert request["role"] == "ask" and request["body"]["stream"] is True


def test_show_reasoning_goes_to_stderr_only(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"content": "42", "reasoning_content": "Six times seven."}])
    result = ask("--show-reasoning", "what is 6*7?", base_url=fake.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "42\n"
    assert "Six times seven." in result.stderr


def test_json_prints_one_object_with_usage_and_timings(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"content": "answer", "reasoning_content": "why",
                                   "usage": {"prompt_cache_hit_tokens": 3}}])
    result = ask("--json", "q", base_url=fake.base_url)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["content"], data["reasoning"], data["model"]) == ("answer", "why", "deepseek-v4-flash")
    assert data["usage"]["prompt_cache_hit_tokens"] == 3
    assert data["timings"]["total_ms"] > 0
    assert data["session_id"]


def test_model_and_profile_overrides_reach_the_request(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"content": "a", "repeat": True}])
    assert ask("--model", "deepseek-v4-flash", "q", base_url=fake.base_url).returncode == 0
    assert ask("--profile", "max_think", "q", base_url=fake.base_url).returncode == 0
    first, second = fake.requests()
    assert first["body"]["model"] == "deepseek-v4-flash"
    assert first["body"]["thinking"] == {"type": "disabled"}
    assert second["body"]["model"] == "deepseek-v4-pro"


def test_prompt_from_stdin(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"match": {"contains": "from stdin"}, "content": "read it"}])
    result = ask("-", base_url=fake.base_url, stdin="a question from stdin\n")
    assert result.stdout == "read it\n", result.stderr


def test_the_call_is_recorded_as_an_ask_session(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"content": "logged"}])
    assert ask("record me", base_url=fake.base_url).returncode == 0
    store = SessionStore(state_dir(ask.workspace, create=False))
    (summary,) = store.list()
    assert (summary.mode, summary.prompt, summary.state) == ("ask", "record me", "Completed")
    events = store.open(summary.session_id).read()
    kinds = [event.kind for event in events]
    assert kinds[0] == "SessionCreated@v1" and kinds.count("LLMCall@v1") == 1
    assert kinds[-1] == "SessionStateChanged@v1" and events[-1].payload["to_state"] == "Completed"
    # The agent's ask, the editor's too: the request and what the model answered are in the transcript.
    turns = [(e.payload["role"], e.payload["content"]) for e in events if e.kind == "TurnAdded@v1"]
    assert turns == [("user", "record me"), ("assistant", "logged")]


@pytest.mark.parametrize(
    ("fault", "exit_code", "message_part"),
    [
        pytest.param({"status": 401}, 3, "DEEPSEEK_API_KEY is not set or invalid", id="auth"),
        pytest.param({"status": 402}, 4, "insufficient balance", id="balance"),
        pytest.param({"status": 429}, 5, "rate limited", id="rate-limit"),
        pytest.param({"status": 503}, 6, "503", id="server"),
        pytest.param({"status": 400}, 8, "bad request", id="bad-request"),
        pytest.param({"cut_after_chunks": 3}, 9, "interrupted", id="interrupted"),
    ],
)
def test_each_error_class_has_its_exit_code_and_one_line(fake_deepseek_process, ask, fault, exit_code, message_part):
    fake = fake_deepseek_process([{"content": "some long answer text", "chunk_chars": 4, "fault": fault,
                                   "repeat": True}])
    result = ask("q", base_url=fake.base_url)
    assert result.returncode == exit_code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("deepseek-ls: error:")]
    assert len(lines) == 1 and message_part in lines[0]


def test_network_error_exit_code(ask):
    result = ask("q", base_url="http://127.0.0.1:9")
    assert result.returncode == 7
    assert "cannot connect to http://127.0.0.1:9" in result.stderr


def test_missing_key_exit_code_and_no_request(fake_deepseek_process, ask):
    fake = fake_deepseek_process([{"content": "never"}])
    result = ask("q", base_url=fake.base_url, DEEPSEEK_API_KEY="")
    assert result.returncode == 3
    assert "DEEPSEEK_API_KEY is not set" in result.stderr
    assert fake.requests() == []
