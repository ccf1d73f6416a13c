"""Every "no" in the terminal ends `deepseek-ls run` in a defined state, promptly: each approval
point the CLI asks about (a patch, a verification command, an acting MCP tool, a clarifying
question, the Hetun mission card) answered `n`, ended with end of input (cancel), or not answered
at all (stdin left open; `policy.approval_timeout_seconds` is 1 s here), and Ctrl-C at a prompt.

The real CLI as a subprocess against one shared fake DeepSeek server. Each case checks the exit
code, the session's state and reason (`--json`), that the prompt came once, that nothing was applied
or run, and that the log stayed small. On the old code `n` at a verification prompt reached on
resume asked again without end (9 MB of output, a 32 MB log in 30 s), end of input was a deny (the
change recorded rejected), and a prompt nobody answered waited for ever.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.testkit.signals import as_a_foreground_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import diff, plan_json, write_app

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
HOSTILE_MCP = Path(__file__).resolve().parents[1] / "mcp" / "hostile_mcp_server.py"
MAX_EVENTS = 80
HANG_GUARD = 120  # seconds: only bounds a failure; a case takes a few


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeDeepSeek]:
    with FakeDeepSeek() as server:
        yield server


@dataclass
class Ran:
    code: int
    view: dict
    stderr: str
    events: list[dict]

    def prompts(self, marker: str) -> int:
        return self.stderr.count(marker)


def workspace(tmp_path: Path) -> Path:
    return write_app(tmp_path / "ws")


def run(fake: FakeDeepSeek, root: Path, args: list[str], answer: str | None, *, sigint_at: str | None = None,
        approval_timeout: int = 1) -> Ran:
    """`deepseek-ls run ARGS --json` in `root`; `answer` is typed then stdin ends, `None` leaves stdin
    open and silent (no answer, withdrawn after `approval_timeout` seconds). `sigint_at`: Ctrl-C once
    stderr shows that text."""
    env = {**os.environ, "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key",
           "DEEPSEEK_LS_INDEX__ENABLED": "false", "DEEPSEEK_LS_LLM__MAX_RETRIES": "0",
           "DEEPSEEK_LS_POLICY__APPROVAL_TIMEOUT_SECONDS": str(approval_timeout),
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    read, write = os.pipe()
    err_path = root.parent / f"stderr-{uuid.uuid4().hex[:6]}"
    with err_path.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "deepseek_ls", "run", *args, "--json"], cwd=root, env=env,
                                stdin=read, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True,
                                preexec_fn=as_a_foreground_command)  # Ctrl-C as a terminal's command gets it
    os.close(read)
    try:
        if answer is not None:
            os.write(write, answer.encode())
            os.close(write)
            write = -1
        if sigint_at is not None:
            wait_for_text(err_path, sigint_at, proc)
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if write != -1:
            os.close(write)
    stderr = err_path.read_text()
    sessions = root / ".deepseek" / "sessions"
    (log,) = [p / "events.jsonl" for p in sessions.iterdir()] if sessions.is_dir() else [None]
    events = [json.loads(line) for line in log.read_text().splitlines()] if log else []
    view = json.loads(out) if out.strip().startswith("{") else {}
    return Ran(proc.returncode, view, stderr, events)


def wait_for_text(path: Path, text: str, proc: subprocess.Popen) -> None:
    import time

    deadline = time.monotonic() + HANG_GUARD
    while text not in path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, path.read_text()[-2000:]
        time.sleep(0.05)


def state(ran: Ran) -> dict:
    return [e["payload"] for e in ran.events if e["kind"] == "SessionStateChanged@v1"][-1]


def refused(ran: Ran, kind: str, answer: str) -> str:
    """The run ended Paused on this refusal (exit 0: waiting for the person); returns the reason."""
    last = state(ran)
    assert ran.code == 0, ran.stderr[-3000:]
    assert last["to_state"] == "Paused" and last["refusal"]["kind"] == kind, last
    assert last["refusal"]["answer"] == answer, last
    assert ran.view["state"] == "Paused" and ran.view["state_reason"] == last["reason"]
    assert len(ran.events) < MAX_EVENTS
    return last["reason"]


ANSWERS = [pytest.param("n\n", "deny", id="n"), pytest.param("", "cancel", id="end-of-input"),
           pytest.param(None, "timeout", id="no-answer")]
APPROVAL = "── approval needed"
QUESTION = "── the agent asks ──"


@pytest.mark.parametrize(("typed", "answer"), ANSWERS)
def test_no_unapproved_exec_cli_patch_refused(fake, tmp_path, typed, answer):
    tag = uuid.uuid4().hex[:6]
    fake.add({"match": {"role": "planner", "contains": tag},
              "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}"}, "content": FIX})
    root = workspace(tmp_path)
    ran = run(fake, root, [f"Fix add {tag}"], typed)

    refused(ran, "patch.apply", answer)
    assert ran.prompts(APPROVAL) == 1 and "a - b" in (root / "app.py").read_text()
    (patch,) = ran.view["patches"]
    assert bool(patch["rejected"]) is (answer == "deny") and not patch["applied"]


@pytest.mark.parametrize(("typed", "answer"), ANSWERS)
def test_never_hang_cli_verification_refused(fake, tmp_path, typed, answer):
    """The bug users hit: the step needs no change, the loop verifies, `n`: the old loop asked again
    and again. Resuming (`run --session`) asks once more and stops the same way."""
    tag = uuid.uuid4().hex[:6]
    root = workspace(tmp_path)
    marker = root / f"ran-{tag}"  # in the workspace (bound writable): were it run, the host would see it
    (root / "Makefile").write_text(f"test:\n\ttouch {marker}\n")
    fake.add({"match": {"role": "planner", "contains": tag},
              "content": plan_json((f"Check add {tag}", ["app.py"]), verification=["make test X=1"])})
    fake.add({"match": {"role": "executor", "contains": f"Check add {tag}"}, "content": "NO_CHANGE|fine as it is"})
    try:
        ran = run(fake, root, [f"Check add {tag}"], typed)
        assert "make test X=1" in refused(ran, "bash.run", answer)
        assert ran.prompts(APPROVAL) == 1 and len(ran.stderr) < 20_000

        again = run(fake, root, ["--session", ran.view["session_id"]], typed)
        refused(again, "bash.run", answer)
        assert again.prompts(APPROVAL) == 1 and len(again.events) - len(ran.events) < 20
        assert not marker.exists()
    finally:
        marker.unlink(missing_ok=True)


@pytest.mark.parametrize(("typed", "answer"), ANSWERS)
def test_no_unapproved_exec_cli_mcp_call_refused(fake, tmp_path, typed, answer):
    tag = uuid.uuid4().hex[:6]
    state_dir = tmp_path / "mcp-state"
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(f'[mcp.servers.srv]\ncommand = {json.dumps(sys.executable)}\n'
                           f'args = {json.dumps([str(HOSTILE_MCP), "acting", str(state_dir)])}\n')
    fake.add({"match": {"role": "planner", "contains": tag},
              "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}", "last_role": "user"},
              "tool_calls": [{"name": "mcp_srv_lookup", "arguments": {"q": tag}}]})
    fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}", "last_role": "tool"}, "content": FIX})
    root = workspace(tmp_path)
    # A deny is told to the model, which goes on: the patch is then put to the person (yes).
    ran = run(fake, root, [f"Fix add {tag}"], "n\ny\n" if answer == "deny" else typed)

    assert not (state_dir / "calls.jsonl").exists()
    if answer == "deny":
        assert ran.code == 0 and ran.view["state"] == "Completed", ran.stderr[-3000:]
        assert ran.prompts("(mcp.call)") == 1 and "return a + b" in (root / "app.py").read_text()
    else:
        assert "mcp_srv_lookup" in refused(ran, "mcp.call", answer)
        assert ran.prompts(APPROVAL) == 1 and "a - b" in (root / "app.py").read_text()
        assert ran.view["plan"]["steps"][0]["status"] == "pending"


@pytest.mark.parametrize(("typed", "answer"), ANSWERS[1:])
def test_never_hang_cli_question_refused(fake, tmp_path, typed, answer):
    tag = uuid.uuid4().hex[:6]
    fake.add({"match": {"role": "planner", "contains": tag}, "content": plan_json((f"Greet {tag}", ["app.py"]))})
    fake.add({"match": {"role": "executor", "contains": f"Greet {tag}"}, "content": "ASK_USER|Which greeting style?"})
    root = workspace(tmp_path)
    ran = run(fake, root, [f"Greet {tag}"], typed)

    assert "Which greeting style?" in refused(ran, "ask_user", answer)
    assert ran.prompts(QUESTION) == 1 and ran.view["plan"]["steps"][0]["status"] == "pending"


@pytest.mark.parametrize(("typed", "answer"), ANSWERS)
def test_never_hang_cli_mission_card_refused(fake, tmp_path, typed, answer):
    tag = uuid.uuid4().hex[:6]
    fake.add({"match": {"role": "hetun.coordinator", "contains": tag}, "content": "SLICE|app.py\n"})
    fake.add({"match": {"role": "hetun.sub", "contains": "app.py"}, "content": "FINDING|0.9|add returns a - b\n"})
    fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"})
    fake.add({"match": {"role": "planner", "contains": tag},
              "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    root = workspace(tmp_path)
    ran = run(fake, root, ["--hetun", f"Fix add {tag}"], typed)

    assert ran.prompts(QUESTION) == 1 and "Approve this mission?" in ran.stderr
    if answer == "deny":  # `n` is reject: nothing runs
        assert ran.code == 0 and "mission rejected" in state(ran)["reason"]
    else:
        assert "still waits" in refused(ran, "mission", answer)
    assert not any(e["kind"] in ("MissionCheckpoint@v1", "PatchStaged@v1") for e in ran.events)


def test_never_hang_cli_ctrl_c_at_the_prompt_pauses_and_exits(fake, tmp_path):
    """Ctrl-C while the prompt waits: the process exits at once (the prompt's read does not hold it),
    the session is Paused and the change still staged."""
    tag = uuid.uuid4().hex[:6]
    fake.add({"match": {"role": "planner", "contains": tag},
              "content": plan_json((f"Fix add {tag}", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor", "contains": f"Fix add {tag}"}, "content": FIX})
    root = workspace(tmp_path)
    # The prompt must still be waiting when Ctrl-C comes, however slow the machine: no 1 s timeout.
    ran = run(fake, root, [f"Fix add {tag}"], None, sigint_at="allow? [y]es once", approval_timeout=HANG_GUARD)

    assert ran.code == 130 and "interrupted; the session is paused" in ran.stderr
    assert state(ran)["to_state"] == "Paused" and len(ran.events) < MAX_EVENTS
    assert not any(e["kind"] in ("PatchRejected@v1", "PatchApplied@v1") for e in ran.events)
    assert "a - b" in (root / "app.py").read_text()
