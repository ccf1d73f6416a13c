"""`FrameParser`: bytes in, message bodies out, whatever the bytes."""

from __future__ import annotations

import random

import pytest

from deepseek_ls.lsp.transport.decoding import decode_problem, strict_converter
from deepseek_ls.lsp.transport.framing import FrameParser, Oversized
from deepseek_ls.lsp.transport.limits import Limits, cap

A = b'{"jsonrpc":"2.0","id":1,"method":"a"}'
B = b'{"jsonrpc":"2.0","id":2,"method":"b"}'
PAD = b"y" * 2000
# Over the limit, the id after the params (as encoders with a hash order write it): read from the end.
LATE_ID = b'{"jsonrpc":"2.0","method":"a","params":{"pad":"' + PAD + b'"},"id":7}'
LATE_ID_THEN_METHOD = b'{"params":{"pad":"' + PAD + b'"}, "id": "s-7", "method": "a", "jsonrpc": "2.0"}'
ID_IN_PARAMS = b'{"jsonrpc":"2.0","method":"a","params":{"pad":"' + PAD + b'","id":7}}'  # a notification


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def parse(data: bytes, limit: int = 1024, chunk: int | None = None) -> list[object]:
    parser = FrameParser(Limits(max_message_bytes=limit))
    out: list[object] = []
    if chunk is None:
        return parser.feed(data)
    for i in range(0, len(data), chunk):
        out += parser.feed(data[i : i + chunk])
    return out


CASES = [
    pytest.param(framed(A) + framed(B), [A, B], id="two-frames"),
    pytest.param(b"content-length: %d\r\n\r\n" % len(A) + A, [A], id="lower-case"),
    pytest.param(b"Content-Length:%d\n\n" % len(A) + A, [A], id="bare-newlines-no-space"),
    pytest.param(b"Content-Type: x\r\nContent-Length: %d\r\n\r\n" % len(A) + A, [A], id="content-type-first"),
    pytest.param(b"garbage\r\n" + framed(A), [A], id="garbage-line"),
    pytest.param(b"{}}}" + framed(A), [A], id="garbage-no-newline"),
    pytest.param(b"abc" + framed(A), [A], id="garbage-glued-to-header"),
    pytest.param(b"abc: def" + framed(A), [A], id="header-like-garbage-glued"),
    pytest.param(b"Content-Length: x\r\n\r\n" + A + framed(B), [B], id="non-numeric"),
    pytest.param(b"Content-Length: -1\r\n\r\n" + A + framed(B), [B], id="negative"),
    pytest.param(b"Content-Length: 0\r\n\r\n" + A + framed(B), [B], id="zero"),
    pytest.param(b"X: y\r\n\r\n" + A + framed(B), [B], id="missing"),
    pytest.param(b"Content-Length: 5\r\n\r\n" + A + framed(B), [A[:5], B], id="too-small"),
    pytest.param(b"Content-Length: 99999999999\r\n\r\n" + A + framed(B), [Oversized(99999999999, 1), B], id="absurd"),
    pytest.param(framed(b"[" * 2000) + framed(B), [Oversized(2000, None), B], id="over-limit-honest"),
    pytest.param(framed(LATE_ID) + framed(B), [Oversized(len(LATE_ID), 7), B], id="over-limit-id-after-params"),
    pytest.param(framed(LATE_ID_THEN_METHOD) + framed(B), [Oversized(len(LATE_ID_THEN_METHOD), "s-7"), B],
                 id="over-limit-id-then-method-after-params"),
    pytest.param(framed(ID_IN_PARAMS) + framed(B), [Oversized(len(ID_IN_PARAMS), None), B], id="over-limit-id-only-in-params"),
]


@pytest.mark.parametrize(("data", "expected"), CASES)
@pytest.mark.parametrize("chunk", [None, 1, 7], ids=["whole", "bytewise", "7-bytes"])
def test_always_answers_framing_table(data: bytes, expected: list[object], chunk: int | None) -> None:
    assert parse(data, chunk=chunk) == expected


def test_an_absurd_length_is_never_allocated() -> None:
    parser = FrameParser(Limits(max_message_bytes=1024))
    assert parser.feed(b"Content-Length: 99999999999\r\n\r\n") == []
    for _ in range(200):  # 12.8 MB of body: skipped, never stored
        assert parser.feed(b"x" * 65536) == []
        assert len(parser._buf) <= 128
    assert parser.feed(b"\r\n" + framed(B))[-1] == B


def test_endless_garbage_is_never_stored() -> None:
    parser = FrameParser(Limits(max_message_bytes=1024))
    rng = random.Random(7)
    for _ in range(100):
        parser.feed(bytes(rng.randrange(256) for _ in range(4096)).replace(b"\n", b" "))
        assert len(parser._buf) <= 8 * 1024 + 64
    assert parser.feed(framed(B)) == [B]


def test_cap_bounds_messages() -> None:
    assert cap("x" * 10) == "x" * 10
    capped = cap("y" * 2_000_000)
    assert len(capped) <= 300 and "2000000 chars" in capped


def test_strict_converter_refuses_coercion() -> None:
    from lsprotocol import types

    converter = strict_converter()
    with pytest.raises(Exception) as error:
        converter.structure({"textDocument": {"uri": 42}}, types.CodeLensParams)
    assert "expected a string" in decode_problem(error.value)
    with pytest.raises(Exception):
        converter.structure({"line": True, "character": 0}, types.Position)
    assert converter.structure({"line": 1, "character": 2}, types.Position) == types.Position(line=1, character=2)


def test_the_strict_decoder_gives_lsprotocols_enums_their_members() -> None:
    """An enum field (they subclass int or str) decodes to its member, so an object the server sends
    back encodes; a value the enum does not know (a newer client's) stays as it came, not an error."""
    from lsprotocol import types

    converter = strict_converter()
    where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    known = converter.structure({"range": where, "message": "m", "severity": 1, "tags": [1]}, types.Diagnostic)
    assert known.severity is types.DiagnosticSeverity.Error and known.tags == (types.DiagnosticTag.Unnecessary,)
    assert converter.unstructure(known)["severity"] == 1
    assert converter.structure({"range": where, "message": "m", "severity": 9}, types.Diagnostic).severity == 9
    with pytest.raises(Exception) as refused:
        converter.structure({"range": where, "message": "m", "severity": "1"}, types.Diagnostic)
    assert "expected an integer" in decode_problem(refused.value)
