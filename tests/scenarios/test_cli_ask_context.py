"""`deepseek-ls ask` sends the workspace context the editor's ask sends (the same agent code),
and project instructions (AGENTS.md, .deepseek/instructions.md) reach every request in the
stable prefix. Asserted on what the fake server received."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scenario_kit import APP, plan_json


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deepseek_ls", *args]


def env_for(url: str, tmp: Path) -> dict[str, str]:
    return {**os.environ, "DEEPSEEK_BASE_URL": url, "DEEPSEEK_API_KEY": "test-key",
            "DEEPSEEK_LS_USER_CONFIG": str(tmp / "no-user.toml"), "DEEPSEEK_LS_LLM__MAX_RETRIES": "0"}


def run(workspace: Path, url: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(cli(*args), cwd=workspace, env=env_for(url, tmp), capture_output=True, text=True,
                          timeout=120)


def test_ask_sends_the_named_file_the_repo_map_and_index_hits(workspace, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([{"match": {"role": "ask"}, "content": "It subtracts.", "repeat": True}])
    assert run(workspace, fake.base_url, tmp_path, "index", "build").returncode == 0
    answer = run(workspace, fake.base_url, tmp_path, "ask", "what does the add function in app.py return?")
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == "It subtracts.\n"
    (request,) = fake.requests()
    messages = request["body"]["messages"]
    text = "\n".join(m["content"] for m in messages)
    assert APP.strip() in text  # the named file, whole
    assert "Repository map" in text and "util.py" in text  # the map lists files the question did not name
    assert "Index hits for the question" in text and "app.py" in text.split("Index hits for the question")[1]
    assert messages[-1] == {"role": "user", "content": "what does the add function in app.py return?"}


def test_no_leak_ask_naming_a_secret_file_does_not_send_it(workspace, fake_deepseek_process, tmp_path):
    (workspace / ".env").write_text("API_TOKEN=sk-live-very-secret-value\n")
    fake = fake_deepseek_process([{"match": {"role": "ask"}, "content": "I cannot see it."}])
    answer = run(workspace, fake.base_url, tmp_path, "ask", "what is in .env and config/.env?")
    assert answer.returncode == 0, answer.stderr
    body = json.dumps(fake.requests()[0]["body"])
    assert "sk-live-very-secret-value" not in body
    assert "not shown" in body  # the model is told the file was refused, not that it is empty


@pytest.mark.parametrize("where", [pytest.param("AGENTS.md", id="agents-md"),
                                   pytest.param(".deepseek/instructions.md", id="deepseek-instructions")])
def test_project_instructions_reach_every_request_in_the_stable_prefix(workspace, fake_deepseek_process, tmp_path,
                                                                        where):
    rule = "Always name the function you change in the first line."
    (workspace / where).parent.mkdir(exist_ok=True)
    (workspace / where).write_text(f"# Rules\n{rule}\n")
    fake = fake_deepseek_process([
        {"match": {"role": "ask"}, "content": "ok"},
        {"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))},
    ])
    assert run(workspace, fake.base_url, tmp_path, "ask", "hello").returncode == 0
    assert run(workspace, fake.base_url, tmp_path, "plan", "Fix add").returncode == 0
    requests = fake.requests()
    assert [r["role"] for r in requests] == ["ask", "planner"]
    for request in requests:
        first = request["body"]["messages"][0]
        # In the system prompt, before the repo map and the request: the prefix the prompt cache reuses.
        assert first["role"] == "system" and rule in first["content"] and where in first["content"]
        assert all(rule not in m["content"] for m in request["body"]["messages"][1:])


def test_instructions_that_leave_the_workspace_are_not_sent(workspace, fake_deepseek_process, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET-OUTSIDE-INSTRUCTIONS")
    (workspace / "AGENTS.md").symlink_to(outside)
    fake = fake_deepseek_process([{"match": {"role": "ask"}, "content": "ok"}])
    assert run(workspace, fake.base_url, tmp_path, "ask", "hello").returncode == 0
    assert "SECRET-OUTSIDE-INSTRUCTIONS" not in json.dumps(fake.requests()[0]["body"])
