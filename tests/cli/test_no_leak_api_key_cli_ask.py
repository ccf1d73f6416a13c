"""`deepseek-ls ask` against a server that echoes the API key back: the key is in no line the CLI
prints (plain, --json, -vv) and in no file it writes. The CLI and the fake server are subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KEY = "sk-CLICANARY-a1b2c3d4e5f6a7b8"


def run_ask(tmp_path: Path, base_url: str, global_flags: list[str], ask_flags: list[str]) -> subprocess.CompletedProcess:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    env = {**os.environ, "DEEPSEEK_BASE_URL": base_url, "DEEPSEEK_API_KEY": KEY,
           "DEEPSEEK_LS_USER_CONFIG": str(tmp_path / "no-user-config.toml"),
           "DEEPSEEK_LS_LLM__RETRY_BASE_SECONDS": "0.01", "DEEPSEEK_LS_LLM__RETRY_MAX_SECONDS": "0.05",
           "DEEPSEEK_LS_LLM__MAX_RETRIES": "1"}
    return subprocess.run([sys.executable, "-m", "deepseek_ls", *global_flags, "--workspace", str(workspace), "ask",
                           *ask_flags, "q"], capture_output=True, text=True, env=env, timeout=120)


ECHO = {"error": {"message": f"Incorrect API key provided: {KEY}"}}
STREAM_ECHO = [f'data: {json.dumps({"choices": [{"index": 0, "delta": {"content": "hi"}}]})}\n\n',
               f'data: {json.dumps({"error": {"message": f"token {KEY} revoked"}})}\n\n']


@pytest.mark.parametrize("fault, exit_code", [
    pytest.param({"status": 401, "body": ECHO}, 3, id="401"),
    pytest.param({"status": 403, "content_type": "text/html",
                  "body": f"<html><title>Forbidden</title><body>Authorization: Bearer {KEY}</body></html>"}, 3,
                 id="403-html"),
    pytest.param({"status": 500, "body": ECHO}, 6, id="500"),
    pytest.param({"status": 307, "headers": {"location": f"http://127.0.0.1:9/?api_key={KEY}"}}, 8,
                 id="redirect-naming-it"),
    pytest.param({"raw_events": STREAM_ECHO}, 9, id="error-in-the-stream-after-data"),
])
@pytest.mark.parametrize("global_flags, ask_flags", [
    pytest.param([], [], id="plain"), pytest.param([], ["--json"], id="json"),
    pytest.param(["-vv"], [], id="debug-logging"),
])
def test_no_leak_api_key_cli_ask(fake_deepseek_process, tmp_path, fault, exit_code, global_flags, ask_flags):
    fake = fake_deepseek_process([{"fault": fault, "repeat": True}])
    result = run_ask(tmp_path, fake.base_url, global_flags, ask_flags)
    assert result.returncode == exit_code, result.stderr
    assert KEY not in result.stdout and KEY not in result.stderr
    assert "error" in (result.stderr + result.stdout).lower()
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the API key is in {path}"
