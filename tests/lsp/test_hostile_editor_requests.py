"""The editor answers the server's own requests badly, or not at all, while the person
goes on: every request the editor sent still gets its answer, the work goes on (or
stops cleanly), nothing is recorded that the editor did not do, and the session's
event log stays whole. The real server process over raw JSON-RPC; the model is the
fake DeepSeek on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

from lsp_harness import CFG_DIFF, CFG_ORIGINAL
from raw_client import NO_ANSWER, RawServer, encode, server_env

SETTINGS = {"index": {"enabled": False}, "llm": {"max_retries": 0}}


def error_answer(message: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "the editor broke"}})


# How the editor answers a request of the server: a result (JSON), raw bytes, or never.
BAD_ANSWERS = [
    pytest.param(error_answer, id="error"),
    pytest.param(lambda m: 5, id="number"),
    pytest.param(lambda m: {"unexpected": True}, id="object"),
    pytest.param(lambda m: "yes", id="string"),
    pytest.param(lambda m: NO_ANSWER, id="never"),
]


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def check_event_logs(root: Path) -> int:
    """Every session log is whole: each line JSON, seq_no 1, 2, 3, ... Returns the events."""
    count = 0
    for log in (root / ".deepseek" / "sessions").glob("*/events.jsonl"):
        seqs = [json.loads(line)["seq_no"] for line in log.read_text().splitlines()]
        assert seqs == list(range(1, len(seqs) + 1)), (log, seqs)
        count += len(seqs)
    return count


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_always_answers_an_ask_whatever_the_editor_answers_to_progress(fake_deepseek, tmp_path: Path, answer) -> None:
    """`window/workDoneProgress/create` answered with an error, garbage or never: the
    ask runs without progress and answers with the model's text."""
    fake_deepseek.add({"match": {"role": "ask"}, "content": "add returns the sum", "repeat": True})
    root = workspace(tmp_path)

    def on_request(message: dict[str, Any]) -> Any:
        if message["method"] == "window/workDoneProgress/create":
            return answer(message)
        return None

    env = server_env(tmp_path, DEEPSEEK_BASE_URL=fake_deepseek.base_url, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.05")
    server = RawServer(root, env, on_request=on_request)
    try:
        server.initialize(options=SETTINGS)
        reply = server.call("workspace/executeCommand", {"command": names.CMD_ASK, "arguments": [{"prompt": "what does add do?"}]}, timeout=60)
        assert reply["result"]["content"] == "add returns the sum", reply
        assert [m for m in server.server_requests if m["method"] == "window/workDoneProgress/create"]
        assert not [n for n in server.notifications if n["method"] == "$/progress"
                    and n["params"]["token"].startswith("deepseek-work")], "progress reported on a token the editor never accepted"
        assert check_event_logs(root) > 0
        assert server.close() == 0
    finally:
        server.kill()


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_always_answers_mcp_approve_whatever_the_editor_answers(tmp_path: Path, answer) -> None:
    """The approval pop-up answered badly or never: nothing is approved, and it says so."""
    root = workspace(tmp_path)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": sys.executable, "args": ["-c", "pass"]}}}))

    def on_request(message: dict[str, Any]) -> Any:
        if message["method"] == "window/showMessageRequest":
            return answer(message)
        return None

    server = RawServer(root, server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.001"), on_request=on_request)
    try:
        server.initialize(options=SETTINGS)
        reply = server.call("workspace/executeCommand", {"command": names.CMD_MCP_APPROVE, "arguments": [{}]}, timeout=60)
        assert "error" in reply or reply["result"]["approved"] == [], reply
        if "error" in reply:
            assert reply["error"]["code"] == -32803 and len(reply["error"]["message"]) <= 300, reply
        assert [m for m in server.server_requests if m["method"] == "window/showMessageRequest"]
        status = server.call("workspace/executeCommand", {"command": names.CMD_MCP_STATUS, "arguments": [{}]})
        assert all(not s["approved"] for s in status["result"]["servers"]), status
        assert server.close() == 0
    finally:
        server.kill()


# -- an applyEdit the editor has not answered yet ---------------------------------------------


class Staged:
    def __init__(self, tmp_path: Path) -> None:
        self.root = workspace(tmp_path)
        (self.root / "cfg.py").write_text(CFG_ORIGINAL)
        self.store = PatchStore(self.root, state_dir(self.root), policy=PathPolicy(self.root))
        patch = self.store.stage(CFG_DIFF)
        self.patch_id, self.hunk_id = patch.patch_id, patch.hunks[0].hunk_id
        self.apply_requests: list[dict[str, Any]] = []

        def on_request(message: dict[str, Any]) -> Any:
            if message["method"] == "workspace/applyEdit":
                self.apply_requests.append(message)
                return NO_ANSWER  # answered by the test, when it says
            return None

        # The server waits 60 s for applyEdit: long enough for every step below.
        self.server = RawServer(self.root, server_env(tmp_path), on_request=on_request)
        self.server.initialize(options=SETTINGS)

    def accept(self) -> Any:
        return self.server.request(
            "workspace/executeCommand",
            {"command": names.CMD_ACCEPT_HUNK, "arguments": [{"patch_id": self.patch_id, "hunk_id": self.hunk_id}]},
        )

    def pending_apply(self) -> dict[str, Any]:
        return self.server.wait(lambda: self.apply_requests and self.apply_requests[-1])

    def answer_apply(self, message: dict[str, Any], result: Any) -> None:
        self.server.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def status(self) -> str:
        return self.store.get(self.patch_id).hunk(self.hunk_id).status


@pytest.fixture
def staged(tmp_path: Path, user_config_home: Path) -> Iterator[Staged]:
    world = Staged(tmp_path)
    yield world
    world.server.kill()


def test_always_answers_an_accept_cancelled_while_the_editor_holds_the_edit(staged: Staged) -> None:
    accepting = staged.accept()
    apply = staged.pending_apply()
    staged.server.notify("$/cancelRequest", {"id": accepting})
    reply = staged.server.answer(accepting)
    assert reply.get("error", {}).get("code") == -32800 or reply["result"]["applied"] is False, reply
    staged.answer_apply(apply, {"applied": True})  # too late: the server no longer waits
    assert "result" in staged.server.call("deepseek/status", {})
    assert staged.status() == "pending"  # not recorded: the server did not see it applied
    assert staged.server.close() == 0


def test_always_answers_other_commands_while_the_editor_holds_the_edit(staged: Staged) -> None:
    accepting = staged.accept()
    apply = staged.pending_apply()
    for command, args in [(names.CMD_CANCEL, {}), (names.CMD_SESSIONS, {}), (names.CMD_TRUST_STATUS, {})]:
        reply = staged.server.call("workspace/executeCommand", {"command": command, "arguments": [args]})
        assert "result" in reply, reply
    hunks = staged.server.call("deepseek/hunks", {"uri": (staged.root / "cfg.py").as_uri()})
    assert [h["status"] for h in hunks["result"]["hunks"]] == ["pending"]
    staged.answer_apply(apply, {"applied": True})
    assert staged.server.answer(accepting)["result"]["applied"] is True
    assert staged.status() == "accepted"
    assert staged.server.close() == 0


def test_always_answers_shutdown_while_the_editor_holds_the_edit(staged: Staged) -> None:
    accepting = staged.accept()
    staged.pending_apply()
    shutdown = staged.server.request("shutdown")
    assert staged.server.answer(shutdown).get("result", "missing") is None
    reply = staged.server.answer(accepting)  # answered, not left hanging by the shutdown
    assert reply.get("error", {}).get("code") == -32800 or reply["result"]["applied"] is False, reply
    staged.server.notify("exit")
    assert staged.server.proc.wait(timeout=30) == 0
    assert staged.status() == "pending"


def test_a_cancel_naming_the_servers_own_request_changes_nothing(staged: Staged) -> None:
    """`$/cancelRequest` cancels the editor's own requests: one naming the server's
    pending applyEdit must not make the server drop its own request."""
    accepting = staged.accept()
    apply = staged.pending_apply()
    staged.server.notify("$/cancelRequest", {"id": apply["id"]})
    assert "result" in staged.server.call("deepseek/status", {})
    staged.answer_apply(apply, {"applied": True})
    reply = staged.server.answer(accepting)
    assert reply.get("result", {}).get("applied") is True, reply
    assert staged.status() == "accepted"
    assert staged.server.close() == 0


def test_always_answers_a_request_reusing_the_id_of_the_servers_own_request(staged: Staged) -> None:
    """An editor request whose id is the id of the server's pending applyEdit: both
    get where they belong (the editor's request is answered, the applyEdit answer
    still counts)."""
    accepting = staged.accept()
    apply = staged.pending_apply()
    reused = staged.server.request("deepseek/status", {}, msg_id=apply["id"])
    first = staged.server.answer(reused)
    assert first.get("error", {}).get("code") == -32600 and "server sent" in first["error"]["message"], first
    staged.answer_apply(apply, {"applied": True})
    reply = staged.server.answer(accepting)
    assert reply.get("result", {}).get("applied") is True, reply
    assert staged.status() == "accepted"
    assert len(staged.server.answers[apply["id"]]) == 1
    assert staged.server.close() == 0
