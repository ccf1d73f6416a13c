"""`session.checked`: how far an earlier check found a log's chain unbroken, so that a later
process hashes that prefix once instead of checking every line's mac again
(`store/provenance.py`). It may only ever make a check faster: a record that is forged,
copied, stale, damaged or planted is ignored, and the verdict is the one the whole chain
gives."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from deepseek_ls.store import provenance, seal
from deepseek_ls.store.sessions import SessionStore

from tests.unit.store.sealing_helpers import log_of


@pytest.fixture(autouse=True)
def _small_records(monkeypatch: pytest.MonkeyPatch) -> None:
    # Records once 4 KiB more were checked (1 MiB in use): small logs, the same code.
    monkeypatch.setattr(provenance, "_CHECK_RECORD_MIN", 4096)
    provenance._verdicts.clear()


def _session(root: Path, turns: int = 60, prompt: str = "the person's own task") -> str:
    with SessionStore(root / ".deepseek", durable=False).create(root, "agent", prompt) as log:
        for n in range(turns):
            log.append("TurnAdded@v1", {"role": "user", "content": f"turn {n}: " + "plain words " * 10})
        return log.session_id


def _append(root: Path, sid: str, turns: int) -> None:
    store = SessionStore(root / ".deepseek", durable=False)
    with store.open(sid) as log:
        for n in range(turns):
            log.append("TurnAdded@v1", {"role": "user", "content": f"later turn {n}: " + "more words " * 10})


def _verdict(root: Path, sid: str) -> str | None:
    """A fresh process's answer (no verdict remembered)."""
    provenance._verdicts.clear()
    return provenance.why_not_ours(root / ".deepseek" / "sessions" / sid, sid)


def _record(root: Path, sid: str) -> dict:
    return json.loads((root / ".deepseek" / "sessions" / sid / provenance.CHECKED_NAME).read_text())


def _start(root: Path, sid: str) -> int | None:
    session_dir = root / ".deepseek" / "sessions" / sid
    marker = json.loads((session_dir / provenance.MARKER_NAME).read_text())
    return provenance._checked_until(session_dir, sid, seal.workspace_id(root), marker,
                                     log_of(root, sid).read_bytes())


def _alter_line(root: Path, sid: str, line_no: int) -> None:
    path = log_of(root, sid)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line_no - 1] = lines[line_no - 1].replace(b"plain words", b"plain WORDS", 1)
    path.write_bytes(b"".join(lines))


def test_a_checked_log_is_checked_from_its_record_next_time(tmp_path, user_config_home):
    sid = _session(tmp_path)
    data = log_of(tmp_path, sid).read_bytes()
    assert _verdict(tmp_path, sid) is None
    record = _record(tmp_path, sid)
    # Every complete line but the last: a writer whose sync fails takes its last line back.
    last_start = data.rfind(b"\n", 0, len(data) - 1) + 1
    assert record["checked_bytes"] == last_start
    assert record["checked_sha256"] == seal.digest(data[:last_start])
    assert _start(tmp_path, sid) == last_start
    # Lines appended since are checked from there, and the record moves on.
    _append(tmp_path, sid, 40)
    assert _verdict(tmp_path, sid) is None
    assert _record(tmp_path, sid)["checked_bytes"] > last_start


def test_a_small_log_gets_no_record(tmp_path, user_config_home):
    sid = _session(tmp_path, turns=2)
    assert _verdict(tmp_path, sid) is None
    assert not (tmp_path / ".deepseek" / "sessions" / sid / provenance.CHECKED_NAME).exists()


def test_never_trust_a_line_altered_inside_the_checked_prefix(tmp_path, user_config_home):
    sid = _session(tmp_path)
    assert _verdict(tmp_path, sid) is None
    _alter_line(tmp_path, sid, 20)
    assert _start(tmp_path, sid) is None  # the prefix is not the one checked: the record no longer holds
    why = _verdict(tmp_path, sid)
    assert why is not None and "line 20 is not the line" in why


def test_never_trust_a_line_altered_after_the_checked_prefix(tmp_path, user_config_home):
    sid = _session(tmp_path)
    assert _verdict(tmp_path, sid) is None
    _append(tmp_path, sid, 10)
    total = len(log_of(tmp_path, sid).read_bytes().splitlines())
    path = log_of(tmp_path, sid)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[total - 3] = lines[total - 3].replace(b"more words", b"MORE words", 1)
    path.write_bytes(b"".join(lines))
    assert _start(tmp_path, sid) is not None  # the prefix still holds: the check starts there
    why = _verdict(tmp_path, sid)
    assert why is not None and f"line {total - 2} is not the line" in why


def _resealed_by_another_user(tmp_path, root, sid, monkeypatch):
    # Someone with another key rewrites the record over the altered log.
    data = log_of(root, sid).read_bytes()
    record = _record(root, sid)
    with monkeypatch.context() as m:
        m.setenv("XDG_CONFIG_HOME", str(tmp_path / "attacker-config"))
        forged = seal.sealed({**record, "checked_bytes": len(data), "checked_sha256": seal.digest(data)})
    return json.dumps(forged)


def _unsealed(tmp_path, root, sid, monkeypatch):
    data = log_of(root, sid).read_bytes()
    record = {k: v for k, v in _record(root, sid).items() if k != "seal"}
    return json.dumps({**record, "checked_bytes": len(data), "checked_sha256": seal.digest(data)})


def _of_another_session(tmp_path, root, sid, monkeypatch):
    # Our own valid record of another session of ours, copied beside this log.
    other = _session(root, prompt="another task")
    assert _verdict(root, other) is None
    return (root / ".deepseek" / "sessions" / other / provenance.CHECKED_NAME).read_text()


def _for_another_marker(tmp_path, root, sid, monkeypatch):
    # A record sealed by us, but for a marker this session no longer has (adopted or resealed since).
    data = log_of(root, sid).read_bytes()
    record = {**_record(root, sid), "marker": "0" * 64, "checked_bytes": len(data), "checked_sha256": seal.digest(data)}
    return json.dumps(seal.sealed(record))


def _past_the_end(tmp_path, root, sid, monkeypatch):
    record = {**_record(root, sid), "checked_bytes": 10**9}
    return json.dumps(seal.sealed(record))


def _garbage(tmp_path, root, sid, monkeypatch):
    return "\x00not json{"


FORGED = [
    pytest.param(_resealed_by_another_user, id="resealed-by-another-user"),
    pytest.param(_unsealed, id="unsealed"),
    pytest.param(_of_another_session, id="record-of-another-session"),
    pytest.param(_for_another_marker, id="record-for-another-marker"),
    pytest.param(_past_the_end, id="checked-past-the-end"),
    pytest.param(_garbage, id="garbage"),
]


@pytest.mark.parametrize("forge", FORGED)
def test_never_trust_a_forged_checked_record(forge, tmp_path, user_config_home, monkeypatch):
    root = tmp_path / "ws"
    sid = _session(root)
    assert _verdict(root, sid) is None
    _alter_line(root, sid, 30)
    text = forge(tmp_path, root, sid, monkeypatch)
    (root / ".deepseek" / "sessions" / sid / provenance.CHECKED_NAME).write_text(text)
    assert _start(root, sid) is None
    why = _verdict(root, sid)
    assert why is not None and "line 30 is not the line" in why


def test_never_trust_a_record_carried_to_another_workspace(tmp_path, user_config_home, monkeypatch):
    root = tmp_path / "ws"
    sid = _session(root)
    assert _verdict(root, sid) is None
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / ".deepseek", elsewhere / ".deepseek")
    assert _verdict(elsewhere, sid) is not None  # the marker names the first workspace
    assert _start(elsewhere, sid) is None


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "directory"])
def test_always_answers_a_checked_record_that_is_not_a_file(target, tmp_path, user_config_home):
    sid = _session(tmp_path)
    assert _verdict(tmp_path, sid) is None
    record = tmp_path / ".deepseek" / "sessions" / sid / provenance.CHECKED_NAME
    record.unlink()
    if target == "fifo":
        os.mkfifo(record)
    elif target == "directory":
        record.mkdir()
    else:
        record.symlink_to(target)
    _alter_line(tmp_path, sid, 5)
    why = _verdict(tmp_path, sid)
    assert why is not None and "line 5 is not the line" in why


def test_a_log_whose_last_line_was_taken_back_stays_ours(tmp_path, user_config_home):
    # A writer whose sync failed truncates its last line: the record never covered it.
    sid = _session(tmp_path)
    assert _verdict(tmp_path, sid) is None
    path = log_of(tmp_path, sid)
    data = path.read_bytes()
    path.write_bytes(data[:data.rfind(b"\n", 0, len(data) - 1) + 1])
    assert _start(tmp_path, sid) is not None
    assert _verdict(tmp_path, sid) is None


def test_a_record_that_cannot_be_written_costs_nothing_but_speed(tmp_path, user_config_home):
    # A read-only or full workspace: the check still answers, and no half record is left.
    sid = _session(tmp_path)
    session_dir = tmp_path / ".deepseek" / "sessions" / sid
    (session_dir / f".{provenance.CHECKED_NAME}.{os.getpid()}.{threading.get_ident()}.tmp").mkdir()
    assert _verdict(tmp_path, sid) is None
    assert not (session_dir / provenance.CHECKED_NAME).exists()
    _alter_line(tmp_path, sid, 7)
    why = _verdict(tmp_path, sid)
    assert why is not None and "line 7 is not the line" in why
