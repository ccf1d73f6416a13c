"""A message that parsed as JSON is answered to its own id, whatever its depth or size.

The editor sends requests and notifications whose params (or a member beside the id) nest
deeper than the transport's limit — a little deeper, or deeper than Python's JSON decoder
can go — hold an unpaired surrogate, or are larger than the message limit, with the id
before or after the params. A request is answered exactly once, to its own id (-32602 when
the problem is in its params, -32600 elsewhere): an error to `id: null` leaves the editor
waiting forever. A notification is never answered and the server keeps serving. The real
server process over raw bytes (docs/protocol.md, "Transport").
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from raw_client import RawServer, frame, serving

LIMIT = 65536  # --max-message-bytes: an oversized message stays cheap to send
NESTING = 64  # the transport's limit (docs/protocol.md, "Limits")
DECOY = "decoy-never-answered"  # an id inside params, which must never be answered


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """One server for every case: each must leave it serving, in sync."""
    for server in serving(tmp_path_factory.mktemp("nesting"), ["--max-message-bytes", str(LIMIT)]):
        yield server
        assert DECOY not in server.answers


def deep(levels: int) -> str:
    """Arrays nested `levels` deep, as JSON text (json.dumps cannot write 5000 levels)."""
    return "[" * levels + "]" * levels


# Levels of arrays that put params just over the limit (the top-level object and params
# are two levels), a top-level member just over it, and far beyond what json.loads can
# read (a RecursionError).
OVER = NESTING - 1
MEMBER_OVER = NESTING
ABYSS = 5000
AT_LIMIT = NESTING - 2
PAD = "x" * (LIMIT + 100)
STATUS = '"jsonrpc": "2.0", "method": "deepseek/status"'

# (the request's body with {id} for its JSON id, the expected answer: "result" or an error code)
REQUESTS = [
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"a": %s}}}}' % deep(OVER),
                 -32602, id="deep-params"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"a": %s}}}}' % deep(ABYSS),
                 -32602, id="params-too-deep-for-the-decoder"),
    pytest.param('{{%s, "params": {{"a": %s}}, "id": {id}}}' % (STATUS, deep(OVER)), -32602, id="id-after-deep-params"),
    pytest.param('{{%s, "params": {{"a": %s}}, "id": {id}}}' % (STATUS, deep(ABYSS)), -32602,
                 id="id-after-params-too-deep-for-the-decoder"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{}}, "x": %s}}' % deep(MEMBER_OVER),
                 -32600, id="deep-member-beside-the-id"),
    pytest.param('{{"x": %s, "id": {id}, %s, "params": {{}}}}' % (deep(ABYSS), STATUS), -32600,
                 id="member-beside-the-id-too-deep-for-the-decoder"),
    pytest.param('{{%s, "params": {{"s": "\\"id\\": 1 ]}}", "id": "%s", "a": %s}}, "id": {id}}}' % (STATUS, DECOY, deep(ABYSS)),
                 -32602, id="decoy-id-and-brackets-in-deep-params"),
    pytest.param('{{ "jsonrpc" : "2.0" , "\\u0069d" : {id} , "method" : "deepseek/status" , "params" : [ %s ] }}' % deep(ABYSS),
                 -32602, id="escaped-id-key-and-blanks"),
    pytest.param('{{"jsonrpc": "2.0", "id": "s-{id}", "method": "deepseek/status", "params": {{"a": %s}}}}' % deep(ABYSS),
                 -32602, id="string-id"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "workspace/executeCommand", "params": '
                 '{{"command": "deepseek.ask", "arguments": [{{"prompt": "hi", "a": %s}}]}}}}' % deep(OVER),
                 -32602, id="deep-command-arguments"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "workspace/executeCommand", "params": '
                 '{{"command": "deepseek.plan", "arguments": [{{"prompt": %s}}]}}}}' % deep(ABYSS),
                 -32602, id="command-arguments-too-deep-for-the-decoder"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"a": "\\ud800"}}}}',
                 -32602, id="lone-surrogate-in-params"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{}}, "x": "\\udc00"}}',
                 -32600, id="lone-surrogate-beside-the-id"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"a": %s}}}}' % deep(AT_LIMIT),
                 "result", id="params-at-the-limit"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"pad": "%s"}}}}' % ("x" * 60000),
                 "result", id="huge-params-under-the-size-limit"),
    pytest.param('{{"jsonrpc": "2.0", "id": {id}, "method": "deepseek/status", "params": {{"pad": "%s"}}}}' % PAD,
                 -32600, id="params-over-the-size-limit-id-first"),
    pytest.param('{{%s, "params": {{"pad": "%s"}}, "id": {id}}}' % (STATUS, PAD), -32600,
                 id="params-over-the-size-limit-id-last"),
    pytest.param('{{"params": {{"pad": "%s"}}, "id": "s-{id}", "method": "deepseek/status", "jsonrpc": "2.0"}}' % PAD,
                 -32600, id="params-over-the-size-limit-id-then-method"),
    pytest.param('{{%s, "params": {{"a": %s, "pad": "%s"}}, "id": {id}}}' % (STATUS, deep(ABYSS), PAD), -32600,
                 id="deep-params-over-the-size-limit-id-last"),
]


@pytest.mark.parametrize(("template", "expected"), REQUESTS)
def test_always_answers_a_request_to_its_own_id_whatever_its_depth_or_size(
    shared: RawServer, template: str, expected: int | str
) -> None:
    number = shared.new_id()
    text = template.replace("{id}", str(number)).replace("{{", "{").replace("}}", "}")
    msg_id = f"s-{number}" if f'"s-{number}"' in text else number
    before = len(shared.null_id_errors)
    shared.send_raw(frame(text.encode()))
    answer = shared.answer(msg_id)
    assert "result" in shared.call("deepseek/status", {})  # still serving, and in sync
    assert len(shared.answers[msg_id]) == 1, shared.answers[msg_id]
    got = "result" if "result" in answer else answer["error"]["code"]
    assert got == expected, answer
    if "error" in answer:
        assert len(answer["error"]["message"]) <= 300, answer
    assert shared.null_id_errors[before:] == []


# A notification's body: never answered (not even an error to `id: null`), never fatal.
NOTIFICATIONS = [
    pytest.param('{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"a": %s}}' % deep(OVER),
                 id="deep-params"),
    pytest.param('{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"a": %s}}' % deep(ABYSS),
                 id="params-too-deep-for-the-decoder"),
    pytest.param('{"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}, "x": %s}' % deep(ABYSS),
                 id="member-too-deep-for-the-decoder"),
    pytest.param('{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "%s", "a": %s}}' % (DECOY, deep(ABYSS)),
                 id="decoy-id-in-deep-params"),
    pytest.param('{"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "\\ud800"}}', id="lone-surrogate"),
    pytest.param('{"jsonrpc": "2.0", "method": "$/setTrace", "params": {"pad": "%s", "id": "%s"}}' % (PAD, DECOY),
                 id="over-the-size-limit-decoy-id-last-in-params"),
    pytest.param('{"params": {"a": %s, "pad": "%s"}, "method": "$/setTrace", "jsonrpc": "2.0"}' % (deep(ABYSS), PAD),
                 id="deep-and-over-the-size-limit"),
]


@pytest.mark.parametrize("text", NOTIFICATIONS)
def test_always_answers_after_a_notification_whatever_its_depth_or_size(shared: RawServer, text: str) -> None:
    before = (len(shared.null_id_errors), sum(map(len, shared.answers.values())))
    shared.send_raw(frame(text.encode()))
    assert "result" in shared.call("deepseek/status", {})
    assert shared.proc.poll() is None
    assert shared.null_id_errors[before[0]:] == []
    assert sum(map(len, shared.answers.values())) == before[1] + 1  # only the probe's answer


def test_always_answers_a_burst_of_deep_requests_each_to_its_own_id(shared: RawServer) -> None:
    """Interleaved deep, oversized and well-formed requests: each id gets its own answer."""
    ids = [shared.new_id() for _ in range(6)]
    bodies = [
        '{"jsonrpc": "2.0", "id": %d, "method": "deepseek/status", "params": {"a": %s}}' % (ids[0], deep(ABYSS)),
        json.dumps({"jsonrpc": "2.0", "id": ids[1], "method": "deepseek/status", "params": {}}),
        '{%s, "params": {"pad": "%s"}, "id": %d}' % (STATUS, PAD, ids[2]),
        json.dumps({"jsonrpc": "2.0", "id": ids[3], "method": "deepseek/status", "params": {}}),
        '{%s, "params": {"a": %s}, "id": %d}' % (STATUS, deep(OVER), ids[4]),
        json.dumps({"jsonrpc": "2.0", "id": ids[5], "method": "deepseek/status", "params": {}}),
    ]
    shared.send_raw(b"".join(frame(body.encode()) for body in bodies))
    answers = [shared.answer(msg_id) for msg_id in ids]
    codes = ["result" if "result" in a else a["error"]["code"] for a in answers]
    assert codes == [-32602, "result", -32600, "result", -32602, "result"], answers
    assert all(len(shared.answers[msg_id]) == 1 for msg_id in ids)
