"""EventLog: validated, durable appends; seq_no continuity; torn-tail repair; nothing else touched."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepseek_ls.store.events import KINDS, Event
from deepseek_ls.store.log import CorruptLog, EventLog, InvalidEvent

SID = "01900000-0000-7000-8000-000000000001"


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "sessions" / SID / "events.jsonl"


def lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n")
    return [json.loads(line) for line in raw.splitlines()]


def turn(text: str = "hi") -> dict:
    return {"role": "user", "content": text}


def test_appends_get_consecutive_seq_numbers_and_read_back_as_events(log_path):
    with EventLog(log_path, SID) as log:
        first = log.append("SessionCreated@v1", {"workspace_root": "/w", "mode": "plan"})
        second = log.append("TurnAdded@v1", turn())
        assert (first.seq_no, second.seq_no) == (1, 2)
        events = log.read()
    assert [e.kind for e in events] == ["SessionCreated@v1", "TurnAdded@v1"]
    assert events[1].payload["content"] == "hi"
    assert all(e.session_id == SID for e in events)
    # The file holds exactly the envelope, one object a line.
    for record in lines(log_path):
        assert set(record) == {"seq_no", "ts", "session_id", "kind", "payload", "mac"}  # mac: store/chain.py
        Event.model_validate({k: v for k, v in record.items() if k != "mac"})


def test_reopening_continues_the_sequence(log_path):
    with EventLog(log_path, SID) as log:
        for _ in range(3):
            log.append("TurnAdded@v1", turn())
    with EventLog(log_path, SID) as log:
        assert log.last_seq == 3
        assert log.append("TurnAdded@v1", turn()).seq_no == 4


def test_two_logs_on_one_file_in_one_process_share_the_sequence(log_path):
    a, b = EventLog(log_path, SID), EventLog(log_path, SID)
    seqs = [a.append("TurnAdded@v1", turn("a")).seq_no, b.append("TurnAdded@v1", turn("b")).seq_no,
            a.append("TurnAdded@v1", turn("a")).seq_no]
    assert seqs == [1, 2, 3]
    a.close(), b.close()


def test_threads_sharing_one_log_never_reuse_a_seq_no(log_path):
    log = EventLog(log_path, SID, durable=False)

    def work() -> None:
        for _ in range(100):
            log.append("TurnAdded@v1", turn())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r["seq_no"] for r in lines(log_path)] == list(range(1, 401))
    log.close()


@pytest.mark.parametrize(
    ("kind", "payload", "message"),
    [
        pytest.param("Nope@v1", {}, "unknown event kind", id="unknown-kind"),
        pytest.param("TurnAdded@v1", {"role": "robot"}, "invalid TurnAdded@v1 payload", id="bad-literal"),
        pytest.param("StepMarked@v1", {"plan_id": "p"}, "invalid StepMarked@v1 payload", id="missing-field"),
        pytest.param("VerificationRun@v1", {"command": "pytest", "exit_code": 0, "ok": True,
                                            "duration_ms": float("nan")}, "Out of range float", id="nan"),
    ],
)
def test_invalid_events_are_refused_and_nothing_is_written(log_path, kind, payload, message):
    with EventLog(log_path, SID) as log:
        log.append("TurnAdded@v1", turn())
        before = log_path.read_bytes()
        with pytest.raises(InvalidEvent, match=message):
            log.append(kind, payload)
        assert log_path.read_bytes() == before
        assert log.append("TurnAdded@v1", turn()).seq_no == 2


def test_payloads_pass_through_redaction_before_writing(log_path):
    def redact(obj):
        return json.loads(json.dumps(obj).replace("sk-live-secret", "[REDACTED]"))

    with EventLog(log_path, SID, redact_obj=redact) as log:
        event = log.append("TurnAdded@v1", turn("my key is sk-live-secret"))
    assert "sk-live-secret" not in log_path.read_text()
    assert event.payload["content"] == "my key is [REDACTED]"


def test_extra_payload_fields_are_kept(log_path):
    with EventLog(log_path, SID) as log:
        log.append("ToolResult@v1", {"call_id": "c1", "tool": "fs.read", "ok": True, "bytes": 12})
    assert lines(log_path)[0]["payload"]["bytes"] == 12


def test_torn_last_line_is_cut_and_kept_aside(log_path):
    with EventLog(log_path, SID) as log:
        log.append("TurnAdded@v1", turn("kept"))
    good = log_path.read_bytes()
    with open(log_path, "ab") as fh:
        fh.write(b'{"seq_no":2,"ts":"x","session_id":"' + SID.encode() + b'","kind":"TurnAd')

    with EventLog(log_path, SID) as log:
        assert log.last_seq == 1
        assert log.append("TurnAdded@v1", turn("after")).seq_no == 2
    assert log_path.read_bytes().startswith(good)
    assert [r["payload"]["content"] for r in lines(log_path)] == ["kept", "after"]
    (aside,) = log_path.parent.glob("events.jsonl.torn-*")
    assert aside.read_bytes().endswith(b'"kind":"TurnAd')


def test_a_complete_looking_garbage_last_line_is_cut(log_path):
    with EventLog(log_path, SID) as log:
        log.append("TurnAdded@v1", turn("kept"))
    with open(log_path, "ab") as fh:
        fh.write(b"\x00\x00\x00\x00\n")
    with EventLog(log_path, SID) as log:
        assert log.append("TurnAdded@v1", turn()).seq_no == 2
    assert len(lines(log_path)) == 2
    (aside,) = log_path.parent.glob("events.jsonl.torn-*")
    assert aside.read_bytes() == b"\x00\x00\x00\x00\n"


def test_a_torn_line_left_by_another_writer_is_cut_before_our_next_append(log_path):
    log = EventLog(log_path, SID)
    log.append("TurnAdded@v1", turn())
    with open(log_path, "ab") as fh:  # another process died mid-write
        fh.write(b'{"seq_no":2,"ts')
    assert log.append("TurnAdded@v1", turn()).seq_no == 2
    assert [r["seq_no"] for r in lines(log_path)] == [1, 2]
    log.close()


def test_damage_in_the_middle_is_reported_not_repaired(log_path):
    with EventLog(log_path, SID) as log:
        for _ in range(3):
            log.append("TurnAdded@v1", turn())
    data = log_path.read_bytes().split(b"\n")
    data[1] = b"this is not json"
    log_path.write_bytes(b"\n".join(data))
    damaged = log_path.read_bytes()
    with EventLog(log_path, SID) as log:
        with pytest.raises(CorruptLog, match=r"events.jsonl:2"):
            log.read()
    assert log_path.read_bytes() == damaged


def test_every_event_kind_has_a_model_and_a_versioned_name():
    assert "SessionStateChanged@v1" in KINDS
    for kind in KINDS:
        name, _, version = kind.partition("@")
        assert name and version == "v1"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.text(), min_size=1, max_size=5))
def test_any_text_round_trips_one_line_per_event(tmp_path, texts):
    path = tmp_path / f"{uuid.uuid4()}.jsonl"
    with EventLog(path, SID, durable=False) as log:
        for text in texts:
            log.append("TurnAdded@v1", turn(text))
        assert [e.payload["content"] for e in log.read()] == texts
    assert path.read_bytes().count(b"\n") == len(texts)


def test_a_log_dropped_without_close_gives_its_file_descriptor_back(log_path):
    import gc
    import os

    EventLog(log_path, SID).append("TurnAdded@v1", turn())
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        EventLog(log_path, SID).append("TurnAdded@v1", turn())
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) <= before
    log = EventLog(log_path, SID)
    log.close()
    log.close()  # closing twice is harmless
