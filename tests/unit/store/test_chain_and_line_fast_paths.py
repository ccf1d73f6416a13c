"""The fast paths of reading a log (a projection rebuild reads every line; bench/bench_event_store.py)
give exactly the answers of the plain ones: `chain.first_break` (its HMAC keyed once) finds the same
break as checking line by line with `chain.split` and `chain.mac_of`, and `parse_line` (pydantic-core's
parser first) returns what `json` returns and refuses what it refuses, with the same message."""

from __future__ import annotations

import hmac
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.store import chain
from deepseek_ls.store.log import CorruptLog, parse_line


def _reference_break(key: bytes, data: bytes, start: int) -> tuple[int, bytes] | None:
    prev, pos = chain.head(data[:start]), start
    while pos < len(data):
        newline = data.find(b"\n", pos)
        if newline < 0:
            return None
        line = data[pos:newline + 1]
        parts = chain.split(line)
        if parts is None or not hmac.compare_digest(parts[1], chain.mac_of(key, prev, parts[0])):
            return pos, line
        prev, pos = parts[1], newline + 1
    return None


def _log(key: bytes, bodies: list[bytes]) -> bytes:
    data = b'{"seq_no":1,"kind":"SessionCreated@v1"}\n'
    prev = chain.head(data)
    for body in bodies:
        line, prev = chain.chained(key, prev, body)
        data += line
    return data


bodies = st.lists(st.binary(max_size=80).map(lambda b: b'{"x":"' + b.replace(b"\n", b"") + b'"'), max_size=6)


@settings(max_examples=300, deadline=None)
@given(key=st.binary(min_size=1, max_size=150), bodies=bodies, edit=st.tuples(st.integers(0, 10_000), st.binary(max_size=3)))
def test_first_break_finds_what_a_line_by_line_check_finds(key, bodies, edit):
    data = _log(key, bodies)
    start = data.find(b"\n") + 1
    assert chain.first_break(key, data, start) is None
    at, junk = edit
    at %= len(data) + 1
    altered = data[:at] + junk + data[at + len(junk):]  # an overwrite, an insert at the end, or nothing
    assert chain.first_break(key, altered, start) == _reference_break(key, altered, start)
    assert chain.first_break(key, altered + b"torn", start) == _reference_break(key, altered + b"torn", start)


@pytest.mark.parametrize("key", [b"k", b"k" * 64, b"k" * 65, bytes(range(200))])
def test_the_keyed_once_hmac_is_hmac_sha256(key):
    inner, outer = chain._hmac_sha256(key)
    for msg in (b"", b"x", b"y" * 1000):
        i, o = inner(), outer()
        i.update(msg)
        o.update(i.digest())
        assert o.digest() == hmac.digest(key, msg, "sha256")


@pytest.mark.parametrize("line", [
    b'{"seq_no":1,"kind":"K","payload":{"a":1,"a":2,"f":1e400,"n":NaN,"big":123456789012345678901234567890}}',
    b'{"seq_no":1,"kind":"K","payload":{"lone":"\\udc00","pair":"\\ud83d\\ude00"},"mac":"ab"}',
    b'{"seq_no":1,"kind":"K","payload":{"\\ud800":-0.0}}',
])
def test_parse_line_reads_what_json_reads(line):
    expected = json.loads(line.decode("utf-8"))
    expected.pop("mac", None)
    assert repr(parse_line(line, Path("events.jsonl"), 3)) == repr(expected)


@pytest.mark.parametrize("line", [b'{"seq_no":1,"kind":"K"} x', b'{"seq_no":1,"kind":"\xff"}', b"\xef\xbb\xbf{}",
                                  b'{"seq_no":1,"kind":"a\x01b"}', b"[1]", b'{"seq_no":"1","kind":"K"}', b""])
def test_parse_line_refuses_what_json_refuses_with_the_same_words(line):
    with pytest.raises(CorruptLog) as error:
        parse_line(line, Path("events.jsonl"), 3)
    try:
        obj = json.JSONDecoder().decode(line.decode("utf-8"))  # what parse_line always used
    except ValueError as plain:
        assert str(error.value) == f"events.jsonl:3: not a JSON event ({plain})"
    else:
        assert not isinstance(obj, dict) or not isinstance(obj.get("seq_no"), int)
        assert str(error.value) == "events.jsonl:3: not an event envelope"
