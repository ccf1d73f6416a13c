"""A buggy or hostile editor, over raw bytes against the real server process: every
request gets exactly one answer (a result or a clear JSON-RPC error), the server
keeps serving (or exits cleanly where the protocol says so) — for the cases the
transport corpus (`test_lsp_transport.py`) and the fuzzer do not cover: every
registered command with arguments of every wrong shape, notifications sent with
an id, cancels of ids that are unknown or already answered, and URIs no editor
should send."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.lsp import names

from raw_client import RawServer, server_env

# No index build, no retries: a command that reaches the (closed) model port fails at once.
SETTINGS = {"index": {"enabled": False}, "llm": {"max_retries": 0}}
RESULT = "result"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One initialized server for the table-driven cases: each case must leave it serving."""
    tmp = tmp_path_factory.mktemp("hostile")
    root = tmp / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "a.py").write_text("x = 1\n")
    server = RawServer(root, server_env(tmp), on_request=lambda message: None)
    assert "result" in server.initialize(options=SETTINGS)
    yield server
    code = server.close()
    assert code == 0, server.stderr()[-3000:]


def outcome(reply: dict[str, Any]) -> Any:
    return RESULT if "result" in reply else reply["error"]["code"]


def probe(server: RawServer) -> None:
    """The server still answers a well-formed request."""
    assert "result" in server.call("deepseek/status", {}), server.stderr()[-2000:]


# -- every command, every wrong argument shape ---------------------------------------------

# Every field any command reads, each of a JSON type it does not take.
WRONG_TYPES = {
    "session_id": 5, "step_id": [], "patch_id": {}, "hunk_id": True, "uri": 42, "request_id": 1.5,
    "question_id": 7, "decision_id": 5, "prompt": 7, "range": "x", "mode": "turbo", "feedback": 3,
    "text": 4, "enabled": "yes", "always": "yes", "reason": 5, "answer": 5, "start": "yes",
}

# (id, arguments, what may come back). A shape no command takes is -32602 for every
# command; the right shape with ids nothing knows is a result or -32803, never an
# internal error.
SHAPES = [
    pytest.param([3], {-32602}, id="number"),
    pytest.param(["x"], {-32602}, id="string"),
    pytest.param([[]], {-32602}, id="array"),
    pytest.param([True], {-32602}, id="boolean"),
    pytest.param([{}, {}], {-32602}, id="two-objects"),
    # A command with none of these fields ignores them (extras are allowed): it runs.
    pytest.param([WRONG_TYPES], {-32602, RESULT, -32803}, id="wrong-field-types"),
]


def unknown_ids(root: Path) -> dict[str, Any]:
    return {
        "session_id": "no-such-session", "step_id": "no-such-step", "patch_id": "no-such-patch",
        "hunk_id": "no-such-hunk", "uri": (root / "a.py").as_uri(), "request_id": "no-such-request",
        "question_id": "no-such-question", "decision_id": "no-such-decision", "prompt": "hi",
        "answer": "x", "text": "x", "fingerprint": "0" * 32, "name": "no-such-command", "instruction": "x",
        "diagnostic": {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "message": "x"},
    }


# Commands whose arguments are all optional: an empty object is a call, not an error.
NO_REQUIRED_FIELDS = {
    names.CMD_ACCEPT_ALL, names.CMD_REJECT_ALL, names.CMD_EXPLAIN_ROUTING, names.CMD_SESSIONS, names.CMD_CANCEL,
    names.CMD_UNDO, names.CMD_MCP_STATUS, names.CMD_MCP_APPROVE, names.CMD_TRUST_WORKSPACE,
    names.CMD_UNTRUST_WORKSPACE, names.CMD_TRUST_STATUS, names.CMD_TOGGLE_TEAMMATE_MODE, names.CMD_REVIEW,
    names.CMD_LIST_COMMANDS,
    names.CMD_COMPACT, names.CMD_CHECKPOINTS, names.CMD_REDO_REWIND,  # list the checkpoints; redo the last rewind
}


def check_error(reply: dict[str, Any]) -> None:
    if "error" in reply:
        message = reply["error"]["message"]
        assert 0 < len(message) <= 300, message
        assert reply["error"]["code"] != -32603, f"an internal error: {message}"


@pytest.mark.parametrize("command", sorted(names.ALL_COMMANDS))
@pytest.mark.parametrize(("arguments", "allowed"), SHAPES)
def test_always_answers_every_command_with_wrong_arguments(
    shared: RawServer, command: str, arguments: list[Any], allowed: set[Any]
) -> None:
    reply = shared.call("workspace/executeCommand", {"command": command, "arguments": arguments})
    assert outcome(reply) in allowed, reply
    check_error(reply)
    if outcome(reply) == -32602:
        assert "argument" in reply["error"]["message"] or "invalid" in reply["error"]["message"], reply


@pytest.mark.parametrize("command", sorted(names.ALL_COMMANDS))
@pytest.mark.parametrize(
    "arguments", [pytest.param(None, id="omitted"), pytest.param([], id="empty-list"), pytest.param([{}], id="empty-object")]
)
def test_always_answers_every_command_with_missing_arguments(
    shared: RawServer, command: str, arguments: list[Any] | None
) -> None:
    params: dict[str, Any] = {"command": command}
    if arguments is not None:
        params["arguments"] = arguments
    reply = shared.call("workspace/executeCommand", params)
    allowed = {RESULT, -32803} if command in NO_REQUIRED_FIELDS else {-32602}
    assert outcome(reply) in allowed, reply
    check_error(reply)
    if outcome(reply) == -32602:  # and it names what is missing
        assert "Field required" in reply["error"]["message"] or "field" in reply["error"]["message"].lower(), reply


@pytest.mark.parametrize("command", sorted(names.ALL_COMMANDS))
def test_always_answers_every_command_with_unknown_ids(shared: RawServer, command: str) -> None:
    reply = shared.call("workspace/executeCommand", {"command": command, "arguments": [unknown_ids(shared.root)]})
    assert outcome(reply) in {RESULT, -32803}, reply
    check_error(reply)
    probe(shared)


def test_a_wrongly_typed_always_does_not_allow_always(shared: RawServer) -> None:
    """`"always": "yes"` is not `true`: no silent coercion of a decision."""
    reply = shared.call(
        "workspace/executeCommand",
        {"command": names.CMD_APPROVE, "arguments": [{"request_id": "no-such-request", "always": "yes"}]},
    )
    assert outcome(reply) == -32602 and "always" in reply["error"]["message"], reply


def test_a_malformed_trust_command_does_not_trust_the_workspace(shared: RawServer) -> None:
    shared.call("workspace/executeCommand", {"command": names.CMD_UNTRUST_WORKSPACE, "arguments": [{}]})
    reply = shared.call("workspace/executeCommand", {"command": names.CMD_TRUST_WORKSPACE, "arguments": ["yes"]})
    assert outcome(reply) == -32602, reply
    status = shared.call("workspace/executeCommand", {"command": names.CMD_TRUST_STATUS, "arguments": [{}]})
    assert status["result"]["trusted"] is False


# -- notifications with an id, requests that are not what they say -------------------------


def did_open(root: Path, name: str, text: str = "y = 2\n") -> dict[str, Any]:
    return {"textDocument": {"uri": (root / name).as_uri(), "languageId": "python", "version": 3, "text": text}}


NOTIFICATIONS_WITH_ID = [
    pytest.param("initialized", lambda root: {}, id="initialized"),
    pytest.param("textDocument/didOpen", lambda root: did_open(root, "opened-with-id.py"), id="didOpen"),
    pytest.param("textDocument/didClose", lambda root: {"textDocument": {"uri": (root / "never.py").as_uri()}}, id="didClose"),
    pytest.param("$/cancelRequest", lambda root: {"id": 987654}, id="cancelRequest"),
    pytest.param("$/setTrace", lambda root: {"value": "off"}, id="setTrace"),
    pytest.param("workspace/didChangeConfiguration", lambda root: {"settings": {}}, id="didChangeConfiguration"),
]


@pytest.mark.parametrize(("method", "make"), NOTIFICATIONS_WITH_ID)
def test_always_answers_a_notification_sent_with_an_id(shared: RawServer, method: str, make) -> None:
    """JSON-RPC: a message with an id is a request and gets an answer. The
    notification is still what the editor meant, so it takes effect too."""
    msg_id = shared.request(method, make(shared.root))
    reply = shared.answer(msg_id)
    assert reply.get("result", "missing") is None, reply
    probe(shared)
    # The id is free again: a later request may use it.
    assert "result" in shared.answer(shared.request("deepseek/status", {}, msg_id=msg_id))


def test_a_did_open_sent_with_an_id_opens_the_buffer(shared: RawServer) -> None:
    shared.answer(shared.request("textDocument/didOpen", did_open(shared.root, "b.py", "typed = 1\n")))
    hunks = shared.call("deepseek/hunks", {"uri": (shared.root / "b.py").as_uri()})
    assert hunks["result"]["version"] == 3  # the editor's buffer, not the disk (no file there)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[RawServer]:
    root = tmp_path / "ws"
    root.mkdir()
    server = RawServer(root, server_env(tmp_path))
    yield server
    server.kill()


@pytest.mark.parametrize(("shut_down", "code"), [pytest.param(True, 0, id="after-shutdown"), pytest.param(False, 1, id="without-shutdown")])
def test_always_answers_exit_sent_with_an_id_and_exits_cleanly(fresh: RawServer, shut_down: bool, code: int) -> None:
    fresh.initialize()
    if shut_down:
        assert fresh.call("shutdown")["result"] is None
    msg_id = fresh.request("exit")
    assert fresh.answer(msg_id).get("result", "missing") is None
    assert fresh.proc.wait(timeout=30) == code
    assert "Traceback" not in fresh.stderr(), fresh.stderr()[-3000:]


# -- cancels ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cancel_id",
    [pytest.param(424242, id="unknown-number"), pytest.param("never-sent", id="unknown-string"), pytest.param("answered", id="already-answered")],
)
def test_always_answers_after_cancelling_what_is_not_running(shared: RawServer, cancel_id: Any) -> None:
    if cancel_id == "answered":
        cancel_id = shared.request("deepseek/status", {})
        shared.answer(cancel_id)
    shared.notify("$/cancelRequest", {"id": cancel_id})
    probe(shared)
    if isinstance(cancel_id, int) and cancel_id in shared.answers:
        assert len(shared.answers[cancel_id]) == 1  # never a second answer


# -- URIs no editor should send ------------------------------------------------------------


def odd_uris(root: Path, outside: Path) -> dict[str, str]:
    return {
        "untitled": "untitled:Untitled-1",
        "notebook-cell": "vscode-notebook-cell:/nb.ipynb#W0sZmlsZQ%3D%3D",
        "percent-encoded-slash": root.as_uri() + "/sub%2F..%2F..%2Fsecret.txt",
        "dot-dot": root.as_uri() + "/../secret.txt",
        "outside-every-folder": (outside / "secret.txt").as_uri(),
        "symlink-out": (root / "link-out" / "secret.txt").as_uri(),
        "no-path": "file://",
        "other-host": "file://evil.example/etc/passwd",
    }


@pytest.fixture(scope="module")
def outside(shared: RawServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outside")
    (folder / "secret.txt").write_text("OUTSIDE-SECRET-CANARY\n")
    (shared.root / "link-out").symlink_to(folder)
    return folder


URI_CASES = list(odd_uris(Path("/r"), Path("/o")))


@pytest.mark.parametrize("case", URI_CASES)
def test_always_answers_requests_on_odd_uris(shared: RawServer, outside: Path, case: str) -> None:
    uri = odd_uris(shared.root, outside)[case]
    shared.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "z = 3\n"}})
    shared.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "z = 4\n"}]})
    replies = [
        shared.call("textDocument/codeLens", {"textDocument": {"uri": uri}}),
        shared.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}),
        shared.call("deepseek/hunks", {"uri": uri}),
        shared.call("workspace/executeCommand", {"command": names.CMD_ACCEPT_FILE, "arguments": [{"patch_id": "p1", "uri": uri}]}),
        shared.call("workspace/executeCommand", {"command": names.CMD_REJECT_FILE, "arguments": [{"patch_id": "p1", "uri": uri}]}),
    ]
    for reply in replies:
        assert outcome(reply) in {RESULT, -32602, -32803}, reply
        check_error(reply)
        assert "OUTSIDE-SECRET-CANARY" not in json.dumps(reply)
    shared.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    probe(shared)


def test_always_answers_after_the_workspace_folder_is_removed(shared: RawServer) -> None:
    folder = {"uri": shared.root.as_uri(), "name": shared.root.name}
    shared.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": [folder]}})
    reply = shared.call("workspace/executeCommand", {"command": names.CMD_SESSIONS, "arguments": [{}]})
    assert "result" in reply, reply
    shared.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}})
    probe(shared)


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_a_symlink_out_of_the_workspace_is_not_sent_as_context(shared: RawServer, outside: Path) -> None:
    uri = (shared.root / "link-out" / "secret.txt").as_uri()
    reply = shared.call("workspace/executeCommand", {"command": names.CMD_ASK, "arguments": [{"prompt": "explain", "uri": uri}]})
    check_error(reply)  # the model port is closed: -32803, but nothing of the file went anywhere
    assert "OUTSIDE-SECRET-CANARY" not in json.dumps(reply)
