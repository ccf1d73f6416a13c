"""ACP writes go through what the client shows, with clients we did not write: the official TypeScript
SDK (`sdk_client.mjs`, an editor with unsaved typing whose person may say no) and acpx.

When the client offers its files, an edit is merged at apply time against the client's buffer
(`fs/read_text_file`) and written through the client (`fs/write_text_file`), never onto the disk
behind it. A refused write is a refused change: nothing written anywhere, the person told, the
session Paused. A refused read is an error the turn reports (a JSON-RPC error: the client exits
non-zero), never a silent read of the disk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_kit import agent_env, events_of, fix_add_workspace, run_acpx, run_sdk_client, said, updates_of

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, diff, plan_json  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
FIXED = APP.replace("a - b", "a + b")
UNSAVED = "# unsaved: a note the person typed and did not save\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return fix_add_workspace(tmp_path)


def _script(fake) -> None:
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["git status"])})
    fake.add({"match": {"role": "executor"}, "content": FIX})


@pytest.fixture(scope="module")
def sdk(tmp_path_factory):
    """One TypeScript SDK client and one agent for three sessions, each in its own workspace: `kept`
    (the person has an unsaved line), `refused_write` (the person says no to the write),
    `refused_read` (to every read). Returns (report, exit code, workspaces, each session's report)."""
    tmp = tmp_path_factory.mktemp("sdk")
    spaces = {name: fix_add_workspace(tmp, name) for name in ("kept", "refused_write", "refused_read")}
    (spaces["kept"] / "logo.png").write_bytes(PNG)
    with FakeDeepSeek() as fake:
        # In `kept` the planner reads app.py and logo.png with its tool first: the buffer; the binary file.
        fake.add({"match": {"role": "planner"}, "tool_calls": [{"name": "fs_read", "arguments": {"path": "app.py"}},
                                                                {"name": "fs_read", "arguments": {"path": "logo.png"}}]})
        for _ in spaces:
            _script(fake)
        report, code = run_sdk_client(tmp, agent_env(fake, tmp), [
            {"op": "new", "cwd": str(spaces["kept"])}, {"op": "prompt", "text": "Fix add"},
            {"op": "client", "refuse": {"write": True}},
            {"op": "new", "cwd": str(spaces["refused_write"])}, {"op": "prompt", "text": "Fix add"},
            {"op": "client", "refuse": {"read": True}},
            {"op": "new", "cwd": str(spaces["refused_read"])}, {"op": "prompt", "text": "Fix add"},
        ], buffers={str(spaces["kept"] / "app.py"): UNSAVED + APP})
        report["tool_results"] = [m.get("content", "") for r in fake.requests if r.role == "planner"
                                  for m in r.body["messages"] if m.get("role") == "tool"]
    sessions = [s["result"]["sessionId"] for s in report["steps"] if s["op"] == "new"]
    prompts = [s for s in report["steps"] if s["op"] == "prompt"]
    parts = {name: {**report, "prompt": prompt, "updates": [u for u in report["updates"] if u["sessionId"] == sid],
                    "writes": [w for w in report["writes"] if w["path"].startswith(str(spaces[name]) + "/")]}
             for name, sid, prompt in zip(spaces, sessions, prompts)}
    return report, code, spaces, parts


def test_never_clobber_acp_an_edit_keeps_the_unsaved_line_in_the_client_buffer(sdk):
    """The person typed a line and did not save it; the edit was staged against their buffer. The
    text written back through the client keeps their line (the old code merged against the disk,
    which lacks it, and wrote that over the buffer)."""
    _, _, spaces, parts = sdk
    run, app = parts["kept"], str(spaces["kept"] / "app.py")
    assert run["prompt"]["result"]["stopReason"] == "end_turn", run["prompt"]
    assert [w["path"] for w in run["writes"]] == [app], "written once, through fs/write_text_file"
    assert run["writes"][0]["content"] == UNSAVED + FIXED, "the unsaved line was lost"
    assert run["reads"].count(app) >= 2, "the apply did not read the client's buffer"
    assert "Done: 1/1" in said(run)


def test_never_clobber_acp_the_models_file_tool_reads_the_client_buffer(sdk):
    """The planner's `fs_read` of a file the client shows returns the client's buffer, unsaved line
    included (the old code answered it from the disk: the tool ran on the event loop, where the
    client cannot be waited for)."""
    report = sdk[0]
    result = report["tool_results"][0]
    assert "unsaved: a note the person typed" in result, result[:500]


def test_always_answers_acp_a_binary_file_is_not_asked_of_the_client(sdk):
    """A binary file has no text for the client to show: the tool says it is not text (a client that
    answered its read with an error would otherwise have stopped the turn as a refused read)."""
    report, _, spaces, parts = sdk
    assert "not UTF-8" in report["tool_results"][1], report["tool_results"][1][:500]
    assert str(spaces["kept"] / "logo.png") not in report["reads"]
    assert parts["kept"]["prompt"]["result"]["stopReason"] == "end_turn"


def test_no_silent_write_acp_a_refused_write_writes_nothing_and_says_so(sdk):
    """The person said no to the write (the client answers fs/write_text_file with an error): nothing
    is written anywhere (the old code wrote the disk instead and said "Done"), the chat says the
    editor refused it, the edit shows failed and the session is Paused with the plan saying so."""
    _, _, spaces, parts = sdk
    run, workspace = parts["refused_write"], spaces["refused_write"]
    assert run["prompt"]["result"]["stopReason"] == "end_turn", run["prompt"]
    assert (workspace / "app.py").read_text() == APP, "written to the disk behind the client"
    assert run["writes"] == [] and ["write", str(workspace / "app.py")] in run["refused"]
    chat = said(run)
    assert "refused" in chat and "app.py" in chat and "nothing was written" in chat, chat
    assert "[Paused]" in chat and "Done" not in chat
    edit = [u for u in updates_of(run, "tool_call_update") if u["toolCallId"].startswith("patch-")]
    assert edit and edit[-1]["status"] == "failed"
    entry = updates_of(run, "plan")[-1]["entries"][0]
    assert entry["status"] != "completed" and "paused" in entry["content"], entry
    states = [e["payload"]["to_state"] for e in events_of(workspace) if e["kind"] == "SessionStateChanged@v1"]
    assert states[-1] == "Paused"
    assert any(e["kind"] == "PatchRejected@v1" for e in events_of(workspace))


def test_no_silent_failure_acp_a_refused_read_is_an_error_of_the_turn(sdk):
    """The client refuses fs/read_text_file: the prompt answers a JSON-RPC error naming the refused
    read (the old code read the disk instead and went on), nothing is written, the client exits 1."""
    _, code, spaces, parts = sdk
    run, workspace = parts["refused_read"], spaces["refused_read"]
    assert code == 1
    error = run["prompt"].get("error")
    assert error is not None, run["prompt"]
    assert "refused" in error["message"] and "app.py" in error["message"], error
    assert run["writes"] == [] and (workspace / "app.py").read_text() == APP


@pytest.mark.parametrize(
    ("flags", "written"),
    [
        pytest.param(["--approve-all"], True, id="approve-all-writes-through-acpx"),
        # The edit's permission is approved, acpx's own "Allow write? (y/N)" is answered no (no terminal).
        pytest.param(["--permission-policy", '{"defaultAction": "approve"}'], False, id="allow-write-answered-no"),
    ],
)
def test_no_silent_write_acp_acpx_writes_only_what_it_allows(fake_deepseek, workspace, tmp_path, flags, written):
    _script(fake_deepseek)
    out = run_acpx(tmp_path, agent_env(fake_deepseek, tmp_path), *flags, prompt="Fix add", cwd=workspace)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    text = (workspace / "app.py").read_text()
    if written:
        assert text == FIXED and "Done: 1/1" in out.stdout
    else:
        assert text == APP, "the agent wrote the disk after acpx refused the write"
        assert "refused" in out.stdout and "nothing was written" in out.stdout and "Done" not in out.stdout


def test_no_silent_failure_acp_acpx_deny_all_refuses_the_reads_and_exits_non_zero(fake_deepseek, workspace, tmp_path):
    """`acpx --deny-all` refuses fs/read_text_file: the turn is a JSON-RPC error, acpx exits non-zero
    and says why; the old code read the disk behind it and acpx exited 0."""
    _script(fake_deepseek)
    out = run_acpx(tmp_path, agent_env(fake_deepseek, tmp_path), "--deny-all", prompt="Fix add", cwd=workspace)
    assert out.returncode != 0, out.stdout[-3000:]
    assert "refused" in out.stdout + out.stderr and "app.py" in out.stdout + out.stderr
    assert (workspace / "app.py").read_text() == APP
