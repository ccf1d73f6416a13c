"""The hardened transport, over raw bytes against the real server process:
every frame, body and param shape a buggy or hostile client can send gets the
documented answer (docs/protocol.md, "Transport"), and the server keeps serving."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

from raw_client import NO_ANSWER, RawServer, encode, frame, server_env, serving

LIMIT = 65536  # --max-message-bytes of the shared server (an oversized message stays cheap)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One initialized server for the table-driven cases: each case must leave it serving."""
    yield from serving(tmp_path_factory.mktemp("transport"), ["--max-message-bytes", str(LIMIT)])


def probe(server: RawServer) -> None:
    """The server still answers a well-formed request."""
    reply = server.call("deepseek/status", {})
    assert "result" in reply, reply


def request(msg_id: int, method: str = "deepseek/status", params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params if params is not None else {}}


# -- framing ---------------------------------------------------------------------------


def body(msg_id: int) -> bytes:
    return json.dumps(request(msg_id)).encode()


# (id, bytes, expected answer for that id: "result", an error code, or None = never answered)
FRAMES = [
    pytest.param(lambda i: b"content-length: %d\r\n\r\n" % len(body(i)) + body(i), "result", id="lower-case-header"),
    pytest.param(lambda i: b"CONTENT-LENGTH:%d\r\n\r\n" % len(body(i)) + body(i), "result", id="upper-case-no-space"),
    pytest.param(
        lambda i: b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body(i)) + body(i),
        "result", id="content-type-first",
    ),
    pytest.param(lambda i: b"Content-Length: %d\n\n" % len(body(i)) + body(i), "result", id="bare-newlines"),
    pytest.param(lambda i: b"\r\n\r\n" + frame(body(i)), "result", id="blank-lines-before"),
    pytest.param(lambda i: b"hello world\r\n" + frame(body(i)), "result", id="garbage-line-before"),
    pytest.param(lambda i: b"\x00\xff{garbage" + frame(body(i)), "result", id="garbage-no-newline-before"),
    pytest.param(lambda i: b"X-Pad: " + b"a" * 20000 + b"\r\n" + frame(body(i)), "result", id="header-block-over-limit"),
    pytest.param(lambda i: b"Content-Length: abc\r\n\r\n" + body(i), None, id="non-numeric-length"),
    pytest.param(lambda i: b"Content-Length: -5\r\n\r\n" + body(i), None, id="negative-length"),
    pytest.param(lambda i: b"Content-Length: 0\r\n\r\n" + body(i), None, id="zero-length"),
    pytest.param(lambda i: b"Content-Type: x\r\n\r\n" + body(i), None, id="missing-length"),
    pytest.param(lambda i: b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n" + body(i), None, id="conflicting-lengths"),
    pytest.param(lambda i: b"Content-Length: 99999999999\r\n\r\n" + body(i), -32600, id="absurd-length-short-body"),
    pytest.param(
        lambda i: b"Content-Length: 999999999999999999999999999999\r\n\r\n" + body(i), None, id="length-too-many-digits"
    ),
    pytest.param(
        lambda i: frame(json.dumps(request(i, params={"pad": "x" * (LIMIT + 10)})).encode()), -32600, id="over-limit-honest"
    ),
]


@pytest.mark.parametrize(("make", "expected"), FRAMES)
def test_always_answers_after_bad_framing(shared: RawServer, make, expected) -> None:
    msg_id = shared.new_id()
    shared.send_raw(make(msg_id))
    probe(shared)  # the stream is back in sync: a later message is answered
    answers = shared.answers.get(msg_id, [])
    if expected is None:
        assert answers == []
    else:
        assert len(answers) == 1
        got = "result" if "result" in answers[0] else answers[0]["error"]["code"]
        assert got == expected, answers[0]


@pytest.mark.parametrize(
    ("declared", "expected_code"),
    [pytest.param(-10, -32700, id="too-small"), pytest.param(+10, -32700, id="too-large-then-padding")],
)
def test_always_answers_wrong_but_plausible_length(shared: RawServer, declared: int, expected_code: int) -> None:
    data = body(shared.new_id())
    before = len(shared.null_id_errors)
    shared.send_raw(b"Content-Length: %d\r\n\r\n" % (len(data) + declared) + data + b"x" * max(declared, 0))
    probe(shared)
    assert [e["error"]["code"] for e in shared.null_id_errors[before:]] == [expected_code]


def test_always_answers_a_frame_delivered_byte_by_byte(shared: RawServer) -> None:
    msg_id = shared.new_id()
    for byte in encode(request(msg_id)):
        shared.send_raw(bytes([byte]))
    assert "result" in shared.answer(msg_id)


def test_skipped_bytes_are_logged(shared: RawServer) -> None:
    shared.send_raw(b"Content-Length: nope\r\n\r\n")
    probe(shared)
    shared.wait(lambda: "is not a non-negative decimal number" in shared.stderr(), timeout=30)


# -- bodies ------------------------------------------------------------------------------

NULL_ID = "null"
BODIES = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, NULL_ID, id="truncated-json"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', -32700, NULL_ID, id="invalid-utf8"),
    pytest.param(b"[" * 30000 + b"]" * 30000, -32700, NULL_ID, id="absurd-nesting"),
    # Parsed JSON is answered to its own id (more in test_hostile_editor_nesting.py).
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"a": %s}}}}' % ("[" * 100 + "]" * 100),
                 -32602, "id", id="deep-params"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "x", "params": {{"a": "\\ud800"}}}}', -32602, "id", id="lone-surrogate"),
    pytest.param(b"[]", -32600, NULL_ID, id="empty-batch"),
    pytest.param(b'[{"jsonrpc": "2.0", "id": 1, "method": "deepseek/status"}]', -32600, NULL_ID, id="batch"),
    pytest.param(b"5", -32600, NULL_ID, id="number"),
    pytest.param(b'"text"', -32600, NULL_ID, id="string"),
    pytest.param(b"null", -32600, NULL_ID, id="null"),
    pytest.param(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "deepseek/status"}', -32600, NULL_ID, id="object-id"),
    pytest.param(b'{"jsonrpc": "2.0", "id": [1], "method": "deepseek/status"}', -32600, NULL_ID, id="array-id"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1.5, "method": "deepseek/status"}', -32600, NULL_ID, id="float-id"),
    pytest.param(b'{"jsonrpc": "2.0", "id": true, "method": "deepseek/status"}', -32600, NULL_ID, id="boolean-id"),
    pytest.param('{{"id": {id}, "method": "deepseek/status"}}', -32600, "id", id="missing-jsonrpc"),
    pytest.param('{{"jsonrpc": "1.0", "id": {id}, "method": "deepseek/status"}}', -32600, "id", id="wrong-jsonrpc"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}}}', -32600, "id", id="missing-method"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": 5}}', -32600, "id", id="number-method"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": 5}}', -32602, "id", id="scalar-params"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/noSuchMethod"}}', -32601, "id", id="unknown-method"),
]


@pytest.mark.parametrize(("raw", "code", "answered_to"), BODIES)
def test_always_answers_bad_bodies(shared: RawServer, raw: bytes | str, code: int, answered_to: str) -> None:
    msg_id = shared.new_id()
    before = len(shared.null_id_errors)
    data = raw.format(id=msg_id).encode() if isinstance(raw, str) else raw
    shared.send_raw(frame(data))
    probe(shared)
    if answered_to == NULL_ID:
        errors = shared.null_id_errors[before:]
        assert [e["error"]["code"] for e in errors] == [code], errors
    else:
        (answer,) = shared.answers[msg_id]
        assert answer["error"]["code"] == code, answer


def test_never_answers_a_malformed_notification(shared: RawServer) -> None:
    """A notification gets no answer, even a malformed one."""
    before = (len(shared.null_id_errors),)
    shared.send_raw(encode({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 5}}))
    shared.send_raw(encode({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {"x": 1}}}))
    probe(shared)
    assert len(shared.null_id_errors) == before[0]


# -- params ------------------------------------------------------------------------------

DOC = "file:///tmp/doc.py"
LONG = "x" * 60_000  # under the shared server's message limit
PARAMS = [
    pytest.param("textDocument/codeLens", {}, id="codeLens-empty"),
    pytest.param("textDocument/codeLens", {"textDocument": {"uri": 42}}, id="codeLens-uri-number"),
    pytest.param("textDocument/hover", {"textDocument": {"uri": DOC}, "position": {"line": -1, "character": 0}}, id="hover-line-negative"),
    pytest.param("textDocument/hover", {"textDocument": {"uri": DOC}, "position": {"line": 2**53, "character": 0}}, id="hover-line-2^53"),
    pytest.param("textDocument/hover", {"textDocument": {"uri": DOC}, "position": {"line": True, "character": 0}}, id="hover-line-boolean"),
    pytest.param("textDocument/hover", {"textDocument": {"uri": DOC}, "position": {"line": 0, "character": "3"}}, id="hover-character-string"),
    pytest.param("textDocument/hover", [DOC, 0, 0], id="hover-array-params"),
    pytest.param("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [1]}, id="command-number-argument"),
    pytest.param("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": ["x"]}, id="command-string-argument"),
    pytest.param("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [{}, {}]}, id="command-two-arguments"),
    pytest.param("workspace/executeCommand", {"command": 5}, id="command-name-number"),
    pytest.param("workspace/executeCommand", {"command": "deepseek.noSuchCommand"}, id="unknown-command"),
    pytest.param("workspace/executeCommand", {"command": "deepseek.approve", "arguments": [{}]}, id="approve-missing-id"),
    pytest.param(
        "workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": LONG, "hunk_id": "h"}]},
        id="patch-id-60k",
    ),
    pytest.param(
        "workspace/executeCommand",
        {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": "../../etc/passwd", "hunk_id": "h"}]},
        id="patch-id-path",
    ),
    pytest.param(
        "workspace/executeCommand", {"command": "deepseek.acceptFile", "arguments": [{"patch_id": "p1", "uri": "not a uri"}]},
        id="file-uri-invalid",
    ),
    pytest.param(
        "workspace/executeCommand", {"command": "deepseek.plan", "arguments": [{"prompt": "x", "uri": 42}]}, id="plan-uri-number"
    ),
    pytest.param("deepseek/hunks", {"uri": 42}, id="hunks-uri-number"),
    pytest.param("deepseek/hunks", {}, id="hunks-uri-missing"),
    pytest.param("deepseek/hunks", {"uri": "file:///" + LONG}, id="hunks-uri-60k"),
    pytest.param("deepseek/plan", {"session_id": 7}, id="plan-session-number"),
]


@pytest.mark.parametrize(("method", "params"), PARAMS)
def test_always_answers_bad_params_with_invalid_params(shared: RawServer, method: str, params: Any) -> None:
    reply = shared.call(method, params)
    assert reply.get("error", {}).get("code") == -32602, reply
    message = reply["error"]["message"]
    assert 0 < len(message) <= 300, message  # a short reason, never an echo of the input
    assert "File name too long" not in message


# -- lifecycle ---------------------------------------------------------------------------


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[RawServer]:
    root = tmp_path / "ws"
    root.mkdir()
    server = RawServer(root, server_env(tmp_path))
    yield server
    server.kill()


def test_always_answers_before_initialize_with_server_not_initialized(fresh: RawServer) -> None:
    assert fresh.call("deepseek/status", {})["error"]["code"] == -32002
    assert fresh.call("textDocument/codeLens", {"textDocument": {"uri": DOC}})["error"]["code"] == -32002
    fresh.notify("textDocument/didOpen", {"textDocument": {"uri": DOC, "languageId": "python", "version": 1, "text": ""}})
    assert "result" in fresh.initialize()
    assert "result" in fresh.call("deepseek/status", {})
    assert fresh.close() == 0


def test_always_answers_a_second_initialize_with_an_error_and_keeps_documents(fresh: RawServer) -> None:
    fresh.initialize()
    uri = (fresh.root / "a.py").as_uri()
    fresh.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 7, "text": "x = 1\n"}})
    assert fresh.call("deepseek/hunks", {"uri": uri})["result"]["version"] == 7
    again = fresh.call("initialize", {"processId": None, "rootUri": fresh.root.as_uri(), "capabilities": {}})
    assert again["error"]["code"] == -32600 and "already initialized" in again["error"]["message"]
    assert fresh.call("deepseek/hunks", {"uri": uri})["result"]["version"] == 7  # the buffer is still known
    assert fresh.close() == 0


def test_always_answers_after_shutdown_with_invalid_request(fresh: RawServer) -> None:
    fresh.initialize()
    assert fresh.call("shutdown")["result"] is None
    assert fresh.call("deepseek/status", {})["error"]["code"] == -32600
    assert fresh.call("shutdown")["error"]["code"] == -32600
    fresh.notify("exit")
    assert fresh.proc.wait(timeout=30) == 0


def test_exit_without_shutdown_exits_1(fresh: RawServer) -> None:
    fresh.initialize()
    fresh.notify("exit")
    assert fresh.proc.wait(timeout=30) == 1


def test_exit_before_initialize_exits_1(fresh: RawServer) -> None:
    fresh.notify("exit")
    assert fresh.proc.wait(timeout=30) == 1


# -- answers of the client to our requests ---------------------------------------------------

from lsp_harness import CFG_DIFF as DIFF, CFG_ORIGINAL as ORIGINAL  # noqa: E402

# (the editor's answer, what the result says, whether that answer leaves unknown if the editor
# applied the edit: then the next accept waits for the buffer, and refuses if it never comes)
ODD_APPLY_EDIT_ANSWERS = [
    pytest.param(None, "malformed answer", True, id="null"),
    pytest.param(5, "malformed answer", True, id="number"),
    pytest.param({}, "malformed answer", True, id="empty-object"),
    pytest.param({"applied": "yes"}, "malformed answer", True, id="applied-string"),
    pytest.param([True], "malformed answer", True, id="array"),
    pytest.param(b"error", "answered with an error", False, id="error-answer"),
    pytest.param(b"both", "malformed answer", True, id="result-and-error"),
    pytest.param(NO_ANSWER, "no answer within", True, id="no-answer"),
    pytest.param({"applied": False, "failureReason": "busy"}, "busy", False, id="refused"),
]


def editor_sends_the_file(server: RawServer) -> None:
    """The editor says what cfg.py holds (opens it with the disk's text, closes it): an
    unanswered edit no longer leaves the buffer unknown."""
    uri = (server.root / "cfg.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": (server.root / "cfg.py").read_text()}})
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.fixture(scope="module")
def staged_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, PatchStore, str, str, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("apply")
    root = tmp / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "cfg.py").write_text(ORIGINAL)
    # For the whole module, this process is the server's user (as `user_config_home` does per test):
    # the patch is sealed with that user's key, and the server's saves read back here.
    same_user = pytest.MonkeyPatch()
    same_user.setenv("XDG_CONFIG_HOME", str(tmp / "xdg-config"))
    same_user.delenv("DEEPSEEK_LS_USER_CONFIG", raising=False)
    store = PatchStore(root, state_dir(root), policy=PathPolicy(root))
    patch = store.stage(DIFF)
    answer: dict[str, Any] = {"value": None}

    def on_request(message: dict[str, Any]) -> Any:
        if message["method"] != "workspace/applyEdit":
            return None
        value = answer["value"]
        if value == b"error":
            return encode({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "editor broke"}})
        if value == b"both":
            return encode({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": True}, "error": {"code": 1, "message": "x"}})
        return value

    # applyEdit waits 60 s × 0.05: the no-answer case times out in 3 s. (0.6 s was once too short for
    # the module's first, prompt answer while a full run started code-server beside it.)
    server = RawServer(root, server_env(tmp, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.05"), on_request=on_request)
    server.initialize()
    yield server, store, patch.patch_id, patch.hunks[0].hunk_id, answer
    server.kill()
    same_user.undo()


@pytest.fixture
def staged(staged_module, monkeypatch: pytest.MonkeyPatch) -> tuple[RawServer, PatchStore, str, str, dict[str, Any]]:
    """The module's server and patch, this test being the server's user too (every test gets its own
    XDG directories, tests/conftest.py: the module's are set again over them)."""
    server = staged_module[0]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(server.root.parent / "xdg-config"))
    return staged_module


@pytest.mark.parametrize(("answer", "reason", "unknown"), ODD_APPLY_EDIT_ANSWERS)
def test_always_answers_accept_hunk_whatever_the_editor_answers(staged, answer: Any, reason: str, unknown: bool) -> None:
    server, store, patch_id, hunk_id, answer_box = staged
    answer_box["value"] = answer
    accept = {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": patch_id, "hunk_id": hunk_id}]}
    result = server.call("workspace/executeCommand", accept)["result"]
    assert result["applied"] is False and reason in result["message"], result
    assert store.get(patch_id).hunk(hunk_id).status == "pending"  # nothing recorded
    # ... and the person is told.
    server.wait(lambda: [n for n in server.notifications if n["method"] == "window/showMessage" and reason in n["params"]["message"]])
    if unknown:  # the editor may still apply it: the next accept is answered without sending an edit on a guess
        edits = len([m for m in server.server_requests if m["method"] == "workspace/applyEdit"])
        again = server.call("workspace/executeCommand", accept)["result"]
        assert again["applied"] is False and "cannot tell whether it applied" in again["message"], again
        assert len([m for m in server.server_requests if m["method"] == "workspace/applyEdit"]) == edits
        editor_sends_the_file(server)


def test_always_answers_a_request_reusing_an_id_in_progress(staged) -> None:
    server, store, patch_id, hunk_id, answer_box = staged
    answer_box["value"] = NO_ANSWER  # keeps the first request in progress until the timeout
    msg_id = server.request(
        "workspace/executeCommand",
        {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": patch_id, "hunk_id": hunk_id}]},
    )
    server.wait(lambda: [m for m in server.server_requests if m["method"] == "workspace/applyEdit"])
    server.request("deepseek/status", {}, msg_id=msg_id)
    answers = server.wait(lambda: len(server.answers.get(msg_id, [])) == 2 and server.answers[msg_id])
    assert answers[0]["error"]["code"] == -32600 and "already in use" in answers[0]["error"]["message"]
    assert answers[1]["result"]["applied"] is False
    editor_sends_the_file(server)  # the edit went unanswered: say what the file holds


def test_accept_hunk_applies_when_the_editor_says_so(staged) -> None:
    server, store, patch_id, hunk_id, answer_box = staged
    answer_box["value"] = {"applied": True}
    reply = server.call(
        "workspace/executeCommand",
        {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": patch_id, "hunk_id": hunk_id}]},
    )
    assert reply["result"]["applied"] is True
    assert store.get(patch_id).hunk(hunk_id).status == "accepted"


@pytest.mark.parametrize(
    "answer",
    [pytest.param(5, id="number"), pytest.param({"title": 5}, id="title-number"), pytest.param(NO_ANSWER, id="no-answer")],
)
@pytest.mark.usefixtures("user_config_home")  # the patch staged here is the server's user's
def test_always_answers_an_approval_whatever_the_editor_answers(tmp_path: Path, answer: Any) -> None:
    """A malformed (or missing) answer to the approval pop-up does not decide it:
    the approval stays pending and the commands still answer it."""
    from deepseek_ls.patch import SafetyGate

    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "cfg.py").write_text(ORIGINAL)
    store = PatchStore(root, state_dir(root), policy=PathPolicy(root), gate=SafetyGate(max_loc_without_approval=1))
    patch = store.stage(DIFF)
    assert patch.approval_required

    def on_request(message: dict[str, Any]) -> Any:
        if message["method"] == "window/showMessageRequest":
            return answer
        return None

    # showMessageRequest waits 600 s × 0.001: the no-answer case times out in 0.6 s.
    server = RawServer(root, server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.001"), on_request=on_request)
    try:
        server.initialize()
        accepting = server.request(
            "workspace/executeCommand", {"command": "deepseek.acceptAll", "arguments": [{"patch_id": patch.patch_id}]}
        )
        server.wait(lambda: [m for m in server.server_requests if m["method"] == "window/showMessageRequest"])
        pending = server.wait(lambda: server.call("deepseek/pendingApprovals", {})["result"]["approvals"])
        denied = server.call(
            "workspace/executeCommand", {"command": "deepseek.deny", "arguments": [{"request_id": pending[0]["request_id"]}]}
        )
        assert denied["result"]["answer"] == "deny"
        result = server.answer(accepting)["result"]
        assert result["applied"] == [] and result["failed"][0]["message"] == "approval denied"
        assert store.get(patch.patch_id).hunks[0].status == "pending"
        assert server.close() == 0
    finally:
        server.kill()
