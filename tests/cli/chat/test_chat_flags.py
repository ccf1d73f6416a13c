"""`deepseek-ls chat --tools=false | --plan-only | --force-execute` off a terminal (a script piping
its messages): each flag overrides the intent routing for every message, an approval left without
an answer (end of input) is cancelled (not denied) and the chat ends cleanly. In-process (`cli.main`, the real
agent) against the fake DeepSeek server over loopback: no process to start, so it is cheap."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from chat_kit import ADD_FIX, make_workspace, plan_reply
from deepseek_ls.cli import main
from deepseek_ls.cli.terminal_ui import RetryNotices


def chat(workspace: Path, monkeypatch: pytest.MonkeyPatch, *flags: str, typed: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    return main(["chat", "--workspace", str(workspace), *flags])


def last_session_events(workspace: Path) -> list[dict]:
    log = sorted((workspace / ".deepseek" / "sessions").glob("*/events.jsonl"))[-1]  # UUIDv7: the newest
    return [json.loads(line) for line in log.read_text().splitlines()]


def payloads(events: list[dict], kind: str) -> list[dict]:
    return [e["payload"] for e in events if e["kind"] == kind]


def test_each_flag_routes_every_message_and_no_answer_denies(tmp_path, monkeypatch, fake_deepseek, capsys):
    workspace = make_workspace(tmp_path / "ws")
    app = (workspace / "app.py").read_text()

    # --tools=false: a change request is only answered.
    fake_deepseek.add({"match": {"role": "chat"}, "content": "Change `-` to `+`."})
    assert chat(workspace, monkeypatch, "--tools=false", typed="fix the add function\n") == 0
    assert [r.role for r in fake_deepseek.requests] == ["chat"]
    assert "Change `-` to `+`." in capsys.readouterr().out  # the answer on stdout, as it came

    # --plan-only: a change request is planned, nothing applied.
    fake_deepseek.add(plan_reply())
    assert chat(workspace, monkeypatch, "--plan-only", typed="fix the add function\n") == 0
    assert [r.role for r in fake_deepseek.requests][1:] == ["planner"]
    assert [d["route"] for d in payloads(last_session_events(workspace), "IntentClassified@v1")] == ["plan"]

    # --force-execute: a question runs the whole loop; the input ends at the approval: cancelled, paused.
    fake_deepseek.add(plan_reply())
    fake_deepseek.add(ADD_FIX)
    assert chat(workspace, monkeypatch, "--force-execute", typed="why does test_add fail?\n") == 0
    assert [r.role for r in fake_deepseek.requests][2:] == ["planner", "executor"]
    events = last_session_events(workspace)
    assert [d["route"] for d in payloads(events, "IntentClassified@v1")] == ["execute"]
    assert [d["answer"] for d in payloads(events, "ApprovalResolved@v1")] == ["cancel"]
    assert payloads(events, "SessionStateChanged@v1")[-1]["to_state"] == "Paused"
    err = capsys.readouterr().err
    assert "(end of input: cancelled)" in err and "Traceback" not in err
    assert (workspace / "app.py").read_text() == app
    # The commands are over: their retry notices with them. A filter left behind took the next
    # model call's retry in this process (tests/scenarios/test_model_capacity.py on the same
    # pytest-xdist worker) and wrote it to this test's closed stderr (ValueError).
    assert not [f for f in logging.getLogger("deepseek_ls.llm").filters if isinstance(f, RetryNotices)]


@pytest.mark.parametrize("flags", [("--plan-only", "--force-execute"), ("--tools=false", "--plan-only"),
                                   ("--tools=false", "--force-execute")])
def test_contradicting_flags_are_a_usage_error_before_anything_starts(tmp_path, monkeypatch, fake_deepseek, capsys,
                                                                      flags):
    workspace = make_workspace(tmp_path / "ws")
    with pytest.raises(SystemExit) as exit_:
        chat(workspace, monkeypatch, *flags, typed="fix the add function\n")
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "cannot be used" in err or "not allowed with" in err
    assert fake_deepseek.requests == []
    assert not (workspace / ".deepseek" / "sessions").exists()
