"""The real CLI over sealed sessions: the person's own history from before seals is hidden until
they adopt it (shown, confirmed, recorded); a log of theirs altered in the middle, or a session
of theirs copied into another workspace, is ignored with the way to adopt it if they trust it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.store.ids import new_id
from deepseek_ls.store.sessions import SessionStore

PROMPT = "refactor the parser (from before seals)"


@pytest.fixture
def cli(tmp_path: Path, user_config_home: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
    env["XDG_CONFIG_HOME"] = str(user_config_home)
    env["HOME"] = str(tmp_path / "home")

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "deepseek_ls", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)

    return run


def _old_log(root: Path) -> str:
    sid = new_id()
    lines = [{"seq_no": 1, "ts": "2026-11-01T10:00:00.000000Z", "session_id": sid, "kind": "SessionCreated@v1",
              "payload": {"workspace_root": str(root), "mode": "agent", "prompt": PROMPT}},
             {"seq_no": 2, "ts": "2026-11-01T10:00:01.000000Z", "session_id": sid, "kind": "TurnAdded@v1",
              "payload": {"role": "user", "content": PROMPT}}]
    log = root / ".deepseek" / "sessions" / sid / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return sid


def test_adopt_a_session_from_before_seals_through_the_cli(cli, tmp_path, user_config_home):
    root = tmp_path / "ws"
    root.mkdir()
    sid = _old_log(root)
    listed = cli(root, "sessions")
    assert sid not in listed.stdout
    assert f"ignored session {sid}" in listed.stderr and f"deepseek-ls sessions --adopt {sid}" in listed.stderr

    refused = cli(root, "sessions", "--adopt", sid[:13])  # stdin is not a terminal and no --yes
    assert refused.returncode == 2 and "pass --yes" in refused.stderr
    assert PROMPT in refused.stderr and "2026-11-01T10:00:00" in refused.stderr  # it was shown
    assert json.loads(cli(root, "sessions", "--json").stdout) == []

    adopted = cli(root, "sessions", "--adopt", sid[:13], "--yes")
    assert adopted.returncode == 0, adopted.stderr
    assert f"adopted session {sid}" in adopted.stderr
    audit = user_config_home / "deepseek-ls" / "adoptions.jsonl"
    assert json.loads(audit.read_text())["id"] == sid
    assert [r["session_id"] for r in json.loads(cli(root, "sessions", "--json").stdout)] == [sid]
    replayed = cli(root, "replay", sid, "--json")
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["session"]["prompt"] == PROMPT

    again = cli(root, "sessions", "--adopt", sid, "--yes")
    assert again.returncode == 1 and "already yours" in again.stderr


def _alter_in_the_middle(root: Path, sid: str) -> Path:
    log = root / ".deepseek" / "sessions" / sid / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"my task", b"rm -rf /")
    log.write_bytes(b"".join(lines))
    return root


def _copy_into_another_workspace(root: Path, sid: str) -> Path:
    other = root.parent / "prepared-repo"
    shutil.copytree(root / ".deepseek" / "sessions" / sid, other / ".deepseek" / "sessions" / sid)
    return other


@pytest.mark.parametrize(("plant", "why"), [
    pytest.param(_alter_in_the_middle, "line 2 is not the line", id="log-altered-in-the-middle"),
    pytest.param(_copy_into_another_workspace, "sealed in another workspace", id="copied-into-another-workspace"),
])
def test_never_trust_an_altered_or_copied_session_through_the_cli(plant, why, cli, tmp_path, user_config_home):
    root = tmp_path / "ws"
    with SessionStore(root / ".deepseek", durable=False).create(root, "agent", "my task") as log:
        log.append("TurnAdded@v1", {"role": "user", "content": "my task"})
        sid = log.session_id
    where = plant(root, sid)
    listed = cli(where, "sessions", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    assert f"ignored session {sid}" in listed.stderr and why in listed.stderr
    assert f"--adopt {sid}" in listed.stderr
    replayed = cli(where, "replay", sid)
    assert replayed.returncode == 1 and "was not written by you" in replayed.stderr and "rm -rf" not in replayed.stdout


@pytest.mark.parametrize(("answer", "code", "adopted"), [
    pytest.param("n", 1, False, id="answered-no"),
    pytest.param("", 1, False, id="just-enter"),
    pytest.param("y", 0, True, id="answered-yes"),
])
def test_adopt_asks_on_a_terminal(answer, code, adopted, tmp_path, user_config_home):
    import pty

    root = tmp_path / "ws"
    root.mkdir()
    sid = _old_log(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
    env["XDG_CONFIG_HOME"] = str(user_config_home)
    env["HOME"] = str(tmp_path / "home")
    master, slave = pty.openpty()
    try:
        os.write(master, (answer + "\n").encode())
        done = subprocess.run([sys.executable, "-m", "deepseek_ls", "sessions", "--adopt", sid], cwd=root, env=env,
                              stdin=slave, capture_output=True, text=True, timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert done.returncode == code, done.stderr
    assert "Adopt it as yours" in done.stderr and PROMPT in done.stderr
    assert (root / ".deepseek" / "sessions" / sid / "session.seal").exists() is adopted
    assert (user_config_home / "deepseek-ls" / "adoptions.jsonl").exists() is adopted
