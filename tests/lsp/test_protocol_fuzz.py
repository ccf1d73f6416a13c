"""A seeded protocol fuzzer against the real server process over raw stdio bytes.

Thousands of messages — valid requests and notifications, mutated params,
malformed bodies, broken frames, and odd answers of the "editor" to the
server's own requests — and for each one the answer the transport promises
(docs/protocol.md, "Transport"). Asserted: no crash (the process serves to the
end and exits 0 after shutdown/exit), no hang (every request id is answered
within a generous bound), exactly one answer per request, the right error
code per class, nothing answered that must not be.

DEEPSEEK_LS_FUZZ_MESSAGES (default 6000) and DEEPSEEK_LS_FUZZ_SEED (default 13)
make a longer or different run.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

from raw_client import NO_ANSWER, RawServer, encode, frame, server_env

MESSAGES = int(os.environ.get("DEEPSEEK_LS_FUZZ_MESSAGES", "6000"))
SEED = int(os.environ.get("DEEPSEEK_LS_FUZZ_SEED", "13"))
LIMIT = 16384  # --max-message-bytes: oversized messages stay cheap to send
BATCH = 150
BATCH_END = encode({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
ANSWER_BOUND = 120.0  # seconds a batch may take to be answered: a hang, not a speed check

RESULT = "result"
NEVER = "never"  # this id must never be answered (its frame could not be delimited)

from lsp_harness import CFG_DIFF as DIFF, CFG_ORIGINAL as ORIGINAL  # noqa: E402


@dataclass
class Plan:
    """What was sent and what each part must produce."""

    expect: dict[Any, Any] = field(default_factory=dict)  # id -> RESULT | error code | NEVER
    null_codes: list[int] = field(default_factory=list)  # errors without id, in order
    classes: Counter[str] = field(default_factory=Counter)
    messages: int = 0


class Fuzzer:
    def __init__(self, rng: random.Random, root: Path, patch_id: str, hunk_id: str) -> None:
        self.rng = rng
        self.root = root
        self.patch_id = patch_id
        self.hunk_id = hunk_id
        self.next_id = 1000
        self.docs = [(root / f"doc{i}.py").as_uri() for i in range(4)]
        self.versions = {uri: 0 for uri in self.docs}

    def new_id(self) -> Any:
        self.next_id += 1
        return self.next_id if self.rng.random() < 0.7 else f"s-{self.next_id}"

    # Valid traffic ----------------------------------------------------------------

    def valid_request(self) -> tuple[str, Any, Any]:
        """(method, params, expected)."""
        uri = self.rng.choice(self.docs)
        position = {"line": self.rng.randrange(0, 50), "character": self.rng.randrange(0, 80)}
        choices = [
            ("deepseek/status", {}, RESULT),
            ("deepseek/pendingApprovals", {}, RESULT),
            ("deepseek/pendingQuestions", {}, RESULT),
            ("deepseek/plan", {}, RESULT),
            ("deepseek/hunks", {"uri": uri}, RESULT),
            ("textDocument/codeLens", {"textDocument": {"uri": uri}}, RESULT),
            ("textDocument/hover", {"textDocument": {"uri": uri}, "position": position}, RESULT),
            ("workspace/executeCommand", {"command": "deepseek.sessions", "arguments": [{}]}, RESULT),
            (
                "workspace/executeCommand",
                {"command": "deepseek.rejectHunk", "arguments": [{"patch_id": "no-such-patch", "hunk_id": "h1"}]},
                -32803,
            ),
            ("deepseek/noSuchMethod", {}, -32601),
            (
                "workspace/executeCommand",
                {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": self.patch_id, "hunk_id": self.hunk_id}]},
                RESULT,  # the editor's odd answer to applyEdit: applied false, and said so
            ),
        ]
        return self.rng.choice(choices)

    def valid_notification(self) -> dict[str, Any]:
        uri = self.rng.choice(self.docs)
        self.versions[uri] += 1
        version = self.versions[uri]
        text = self.rng.choice(["x = 1\n", "def f():\n    return '😀 漢字'\n", "", "a\r\nb\r\n" * 20])
        options = [
            ("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}}),
            ("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            ("textDocument/didSave", {"textDocument": {"uri": uri}}),
            ("textDocument/didClose", {"textDocument": {"uri": uri}}),
            ("$/cancelRequest", {"id": self.rng.randrange(10**6, 10**7)}),
            ("$/setTrace", {"value": "off"}),
            ("workspace/didChangeConfiguration", {"settings": {"deepseek": {"router": {"threshold_high": 0.8}}}}),
            ("workspace/didChangeConfiguration", {"settings": {"deepseek": {"router": {"threshold_high": "high"}}}}),
            ("deepseek/unknownNotification", {"x": 1}),
        ]
        method, params = self.rng.choice(options)
        return {"jsonrpc": "2.0", "method": method, "params": params}

    # Mutations --------------------------------------------------------------------------

    def invalid_params(self) -> tuple[str, Any]:
        rng = self.rng
        bad_uri = rng.choice([42, None, [], {}, True, "not a uri", "file:///" + "x" * 5000])
        bad_line = rng.choice([-1, 2**31, 2**53, "3", True, 1.5, None])
        uri = rng.choice(self.docs)
        bad_id = rng.choice([5, "../../etc/passwd", "x" * 300, "", "a/b", None, {"x": 1}])
        choices: list[tuple[str, Any]] = [
            ("textDocument/codeLens", {}),
            ("textDocument/codeLens", {"textDocument": {"uri": bad_uri}}),
            ("textDocument/codeLens", {"textDocument": uri}),
            ("textDocument/codeLens", rng.choice([[], [1], [uri]])),
            ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": bad_line, "character": 0}}),
            ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": bad_line}}),
            ("textDocument/hover", {"textDocument": {"uri": uri}}),
            ("deepseek/hunks", {"uri": bad_uri}),
            ("deepseek/hunks", {}),
            ("deepseek/hunks", rng.choice([[1], ["x"], [{}]])),
            ("deepseek/plan", {"session_id": bad_id if bad_id is not None else 5}),
            ("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [rng.choice([1, "x", [], True])]}),
            ("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [{}, {}]}),
            ("workspace/executeCommand", {"command": "deepseek.acceptHunk", "arguments": [{"patch_id": bad_id, "hunk_id": "h"}]}),
            ("workspace/executeCommand", {"command": "deepseek.acceptFile", "arguments": [{"patch_id": "p", "uri": bad_uri}]}),
            ("workspace/executeCommand", {"command": "deepseek.approve", "arguments": [{}]}),
            ("workspace/executeCommand", {"command": "deepseek.answer", "arguments": [{"question_id": bad_id or 5}]}),
            ("workspace/executeCommand", {"command": rng.choice([5, None, "deepseek.noSuchCommand"])}),
            ("workspace/executeCommand", {"arguments": [{}]}),
        ]
        return rng.choice(choices)

    def malformed_body(self, msg_id: Any) -> tuple[bytes, Any, int | None]:
        """(body, where the error goes: "null" or msg_id, code)."""
        rng = self.rng
        valid = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "deepseek/status", "params": {}}).encode()
        depth = rng.randrange(65, 400)
        choices: list[tuple[bytes, Any, int]] = [
            (valid[: rng.randrange(1, len(valid) - 1)], "null", -32700),
            (b"{" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))), "null", -32700),
            (valid.replace(b"deepseek/status", b"deepseek/\xff\xfe"), "null", -32700),
            (b"[" * depth + b"]" * depth, "null", -32700),
            (json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "x", "params": {"a": "\\ud800"}}).encode().replace(b"\\\\", b"\\"), msg_id, -32602),
            (b'{"jsonrpc": "2.0", "method": "deepseek/status", "params": {"a": %s}, "id": %s}'
             % (b"[" * depth + b"]" * depth, json.dumps(msg_id).encode()), msg_id, -32602),
            (rng.choice([b"[]", b"[1, 2]", b"5", b'"x"', b"null", b"true", b"{}"]), "null", -32600),
            (json.dumps({"jsonrpc": "2.0", "id": rng.choice([{"a": 1}, [1], 1.5, True, False]), "method": "deepseek/status"}).encode(), "null", -32600),
            (json.dumps({"id": msg_id, "method": "deepseek/status"}).encode(), msg_id, -32600),
            (json.dumps({"jsonrpc": rng.choice(["1.0", 2, None]), "id": msg_id, "method": "deepseek/status"}).encode(), msg_id, -32600),
            (json.dumps({"jsonrpc": "2.0", "id": msg_id}).encode(), msg_id, -32600),
            (json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": rng.choice([5, None, "", [], {}])}).encode(), msg_id, -32600),
            (json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "deepseek/status", "params": rng.choice([5, "x", True])}).encode(), msg_id, -32602),
        ]
        return rng.choice(choices)

    # Cases ----------------------------------------------------------------------------------

    def case(self, plan: Plan) -> bytes:
        rng = self.rng
        roll = rng.random()
        plan.messages += 1
        if roll < 0.30:
            msg_id = self.new_id()
            method, params, expected = self.valid_request()
            plan.expect[msg_id] = expected
            plan.classes["valid request"] += 1
            data = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
            header = rng.choice([None, b"content-length: %d\r\n\r\n", b"CONTENT-LENGTH:%d\n\n",
                                 b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n"])
            return frame(data, header % len(data) if header else None)
        if roll < 0.42:
            plan.classes["valid notification"] += 1
            return encode(self.valid_notification())
        if roll < 0.64:
            msg_id = self.new_id()
            method, params = self.invalid_params()
            plan.expect[msg_id] = -32602
            plan.classes["invalid params"] += 1
            return encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        if roll < 0.80:
            msg_id = self.new_id()
            data, target, code = self.malformed_body(msg_id)
            plan.classes[f"malformed body {code}"] += 1
            if target == "null":
                plan.null_codes.append(code)
                if str(msg_id).encode() in data:
                    plan.expect[msg_id] = NEVER
            else:
                plan.expect[msg_id] = code
            return frame(data)
        if roll < 0.95:
            return self.broken_frame(plan)
        return self.odd_client_answer(plan)

    def broken_frame(self, plan: Plan) -> bytes:
        rng = self.rng
        msg_id = self.new_id()
        data = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "deepseek/status", "params": {}}).encode()
        kind = rng.choice(["garbage", "non-numeric", "negative", "zero", "missing", "conflicting", "too-small",
                           "too-large", "absurd", "oversized"])
        plan.classes[f"frame {kind}"] += 1
        if kind == "garbage":
            plan.messages -= 1  # not a message
            junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
            return junk.lower().replace(b"content-length", b"c")
        if kind in ("non-numeric", "negative", "zero", "missing", "conflicting"):
            plan.expect[msg_id] = NEVER
            header = {
                "non-numeric": b"Content-Length: %s\r\n\r\n" % rng.choice([b"abc", b"", b"1e3", b"0x10", b"12 34"]),
                "negative": b"Content-Length: -%d\r\n\r\n" % len(data),
                "zero": b"Content-Length: 0\r\n\r\n",
                "missing": b"Content-Type: application/json\r\n\r\n",
                "conflicting": b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(data), len(data) + 1),
            }[kind]
            return header + data
        if kind == "too-small":
            plan.expect[msg_id] = NEVER
            plan.null_codes.append(-32700)
            return b"Content-Length: %d\r\n\r\n" % rng.randrange(1, len(data) - 1) + data
        if kind == "too-large":
            plan.expect[msg_id] = NEVER
            plan.null_codes.append(-32700)
            extra = rng.randrange(1, 40)
            return b"Content-Length: %d\r\n\r\n" % (len(data) + extra) + data + b"x" * extra
        if kind == "absurd":
            plan.expect[msg_id] = -32600
            return b"Content-Length: %d\r\n\r\n" % rng.choice([99999999999, LIMIT + 1, 2**63]) + data
        # oversized, honestly sent
        plan.expect[msg_id] = -32600
        big = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "deepseek/status", "params": {"pad": "x" * LIMIT}}).encode()
        return frame(big)

    def odd_client_answer(self, plan: Plan) -> bytes:
        """An answer to a request the server never sent (or sent long ago)."""
        plan.classes["unsolicited answer"] += 1
        answer = self.rng.choice([{"result": 5}, {"result": None}, {"error": {"code": -1, "message": "no"}}, {"result": {}}])
        return encode({"jsonrpc": "2.0", "id": f"not-ours-{self.rng.randrange(10**6)}", **answer})


def odd_answer(rng: random.Random, message: dict[str, Any]) -> Any:
    """How the fuzzing 'editor' answers the server's own requests."""
    msg_id = message["id"]
    choice = rng.random()
    if message["method"] == "workspace/applyEdit":
        options: list[Any] = [None, 5, {}, {"applied": "yes"}, [True], {"applied": False, "failureReason": "busy"}]
        if choice < 0.05:
            return NO_ANSWER  # times out (scaled down in this test)
        if choice < 0.15:
            return encode({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "editor broke"}})
        if choice < 0.20:
            return encode({"jsonrpc": "2.0", "id": msg_id, "result": {"applied": True}, "error": {"code": 1, "message": "x"}})
        return rng.choice(options)
    if choice < 0.1:
        return NO_ANSWER
    return rng.choice([None, None, 5, {}, "x"])


@pytest.mark.usefixtures("user_config_home")  # the patch staged here is the server's user's
def test_protocol_fuzz_always_answers(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "cfg.py").write_text(ORIGINAL)
    store = PatchStore(root, state_dir(root), policy=PathPolicy(root))
    patch = store.stage(DIFF)
    answer_rng = random.Random(SEED + 1)
    env = server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.005")
    server = RawServer(root, env, ["--max-message-bytes", str(LIMIT)], on_request=lambda m: odd_answer(answer_rng, m))
    fuzzer = Fuzzer(rng, root, patch.patch_id, patch.hunks[0].hunk_id)
    plan = Plan()
    try:
        # Before initialize: requests get -32002, notifications are dropped.
        for _ in range(20):
            msg_id = fuzzer.new_id()
            plan.expect[msg_id] = -32002
            plan.messages += 2
            plan.classes["before initialize"] += 2
            server.send({"jsonrpc": "2.0", "id": msg_id, "method": "deepseek/status", "params": {}})
            server.send(fuzzer.valid_notification())
        server.wait(lambda: all(i in server.answers for i, e in plan.expect.items() if e != NEVER), ANSWER_BOUND)
        assert "result" in server.initialize()
        plan.messages += 2

        while plan.messages < MESSAGES:
            batch = b"".join(fuzzer.case(plan) for _ in range(min(BATCH, MESSAGES - plan.messages)))
            # An absurd Content-Length is only delimited by the next header: end each batch with
            # one (not left to the answers to the server's applyEdits, which an accept may not send).
            server.send_raw(batch + BATCH_END)
            waiting = [i for i, e in plan.expect.items() if e != NEVER]
            server.wait(
                lambda: all(i in server.answers for i in waiting) and len(server.null_id_errors) >= len(plan.null_codes),
                ANSWER_BOUND,
            )
        # A last well-formed request behind everything: the stream is in sync.
        assert "result" in server.call("deepseek/status", {})
        unanswered = [i for i, e in plan.expect.items() if e != NEVER and i not in server.answers]
        wrong = _wrong_replies(plan, server)
        exit_code = server.close(timeout=60)
    finally:
        server.kill()
    print(
        f"\nfuzz: seed {SEED}, {plan.messages} messages, {len(server.server_requests)} server->client requests answered oddly, "
        f"crashes {0 if exit_code == 0 else 1}, unanswered {len(unanswered)}, wrong replies {len(wrong)}\n"
        + "\n".join(f"  {name}: {count}" for name, count in sorted(plan.classes.items()))
    )
    assert exit_code == 0, server.stderr()[-3000:]
    assert unanswered == []
    assert wrong == [], wrong[:10]
    assert plan.messages >= MESSAGES
    assert server.unparseable == []


def _wrong_replies(plan: Plan, server: RawServer) -> list[str]:
    wrong: list[str] = []
    for msg_id, answers in server.answers.items():
        if isinstance(msg_id, int) and msg_id < 1000:
            continue  # the harness's own initialize / probe / shutdown
        expected = plan.expect.get(msg_id)
        if expected is None:
            wrong.append(f"an answer to {msg_id!r}, which was never sent: {answers[0]}")
            continue
        if len(answers) != 1:
            wrong.append(f"{len(answers)} answers to {msg_id!r}")
        got = RESULT if "result" in answers[0] else answers[0].get("error", {}).get("code")
        if expected == NEVER:
            wrong.append(f"{msg_id!r} could not be delimited, yet was answered: {answers[0]}")
        elif got != expected:
            wrong.append(f"{msg_id!r}: expected {expected}, got {answers[0]}")
        elif "error" in answers[0] and len(answers[0]["error"].get("message", "")) > 300:
            wrong.append(f"{msg_id!r}: an error message of {len(answers[0]['error']['message'])} chars")
    got_null = [e["error"]["code"] for e in server.null_id_errors]
    if got_null != plan.null_codes:
        wrong.append(f"errors without id: expected {Counter(plan.null_codes)}, got {Counter(got_null)}")
    return wrong
