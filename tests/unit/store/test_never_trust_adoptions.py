"""`adopt`: the person vouches for an ignored session (their history from before seals, a
project they moved) and it becomes theirs, exactly as it was shown to them and recorded in the
audit file. Damaged logs are refused; nothing is adopted behind the person's back."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from sealing_helpers import PROMPT, legacy_log, listed, log_of, reason, sealed_session

from deepseek_ls.store import seal
from deepseek_ls.store.provenance import CannotAdopt
from deepseek_ls.store.sessions import SessionStore


def _store(root):
    return SessionStore(root / ".deepseek", durable=False)


def test_adopting_a_session_from_before_seals_makes_it_ours_and_is_audited(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid, data = legacy_log(root)
    assert listed(root) == [] and "no session.seal" in reason(root, sid)
    found = _store(root).adoptable(sid[:13])
    assert (found.session_id, found.prompt, found.event_count, found.torn_bytes) == (sid, PROMPT, 4, 0)
    assert "no session.seal" in found.reason
    audit = _store(root).adopt(found)
    assert listed(root) == [sid]
    [entry] = [json.loads(line) for line in audit.read_text().splitlines()]
    assert entry["record"] == "session" and entry["id"] == sid and entry["sha256"] == seal.digest(data)
    assert entry["workspace"] == seal.workspace_id(root) and "no session.seal" in entry["was_ignored_because"]
    assert audit.parent == seal.key_path().parent and os.stat(audit).st_mode & 0o077 == 0
    with _store(root).open(sid) as log:  # resumed after adoption: new lines chain on
        log.append("TurnAdded@v1", {"role": "user", "content": "resumed"})
    assert listed(root) == [sid]


def test_adopting_a_moved_project_s_session(tmp_path, user_config_home):
    old, new = tmp_path / "old-name", tmp_path / "new-name"
    sid = sealed_session(old)
    old.rename(new)
    assert listed(new) == []
    _store(new).adopt(_store(new).adoptable(sid))
    assert listed(new) == [sid]


def test_adopting_a_session_with_a_torn_last_line_leaves_the_torn_bytes_out(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid, data = legacy_log(root)
    log_of(root, sid).write_bytes(data + b'{"seq_no":5,"ts')
    found = _store(root).adoptable(sid)
    assert found.torn_bytes == len(b'{"seq_no":5,"ts') and found.log == data
    _store(root).adopt(found)
    assert listed(root) == [sid]


def test_what_is_sealed_is_what_was_shown(tmp_path, user_config_home):
    # The log changes between showing it and the person's yes: what they did not see is not theirs.
    root = tmp_path / "ws"
    sid, data = legacy_log(root)
    found = _store(root).adoptable(sid)
    lines = data.splitlines(keepends=True)
    log_of(root, sid).write_bytes(lines[0] + lines[1].replace(b"turn 0", b"rm -rf") + b"".join(lines[2:]))
    _store(root).adopt(found)
    assert listed(root) == [] and "beginning differs" in reason(root, sid)


def _garbage_in_the_middle(root, sid, data):
    lines = data.splitlines(keepends=True)
    lines[2] = b"not json\n"
    return b"".join(lines)


def _seq_gap(root, sid, data):
    lines = data.splitlines(keepends=True)
    del lines[2]
    return b"".join(lines)


def _another_session_s_events(root, sid, data):
    lines = data.splitlines(keepends=True)
    lines[3] = lines[3].replace(sid.encode(), b"01900000-0000-7000-8000-000000000009")
    return b"".join(lines)


def _no_session_created(root, sid, data):
    return data.replace(b"SessionCreated@v1", b"TurnAdded@v1", 1)


def _empty(root, sid, data):
    return b""


DAMAGED = [
    pytest.param(_garbage_in_the_middle, "not a JSON event", id="garbage-line-in-the-middle"),
    pytest.param(_seq_gap, "line 3 is event 4", id="seq-gap"),
    pytest.param(_another_session_s_events, "of session '01900000", id="another-session-s-event"),
    pytest.param(_no_session_created, "does not start with SessionCreated", id="no-session-created"),
    pytest.param(_empty, "does not start with SessionCreated", id="empty-log"),
]


@pytest.mark.parametrize(("damage", "why"), DAMAGED)
def test_never_adopt_a_damaged_session(damage, why, tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid, data = legacy_log(root)
    log_of(root, sid).write_bytes(damage(root, sid, data))
    with pytest.raises(CannotAdopt, match=why):
        _store(root).adoptable(sid)
    assert not (log_of(root, sid).parent / "session.seal").exists()
    assert not (seal.key_path().parent / seal.ADOPTIONS_FILE).exists()


def test_never_adopt_through_a_symlinked_log(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid, data = legacy_log(root)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(data)
    log_of(root, sid).unlink()
    log_of(root, sid).symlink_to(elsewhere)
    with pytest.raises(CannotAdopt, match="symbolic link"):
        _store(root).adoptable(sid)


def test_a_session_that_is_ours_already_is_not_adopted_again(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid = sealed_session(root)
    with pytest.raises(CannotAdopt, match="already yours"):
        _store(root).adoptable(sid)


def test_an_adopted_session_copied_into_another_workspace_is_not_ours_there(tmp_path, user_config_home):
    a, b = tmp_path / "a", tmp_path / "b"
    sid, _ = legacy_log(a)
    _store(a).adopt(_store(a).adoptable(sid))
    shutil.copytree(a / ".deepseek", b / ".deepseek")
    assert listed(a) == [sid] and listed(b) == []
