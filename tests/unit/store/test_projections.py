"""Projections: what they show, and that a rebuild from the logs equals the live (incremental) rows."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepseek_ls.store.ids import is_id, uuid7_time_ms
from deepseek_ls.store.log import SessionNotFound
from deepseek_ls.store.projections import Projections, dump_all, session_projection
from deepseek_ls.store.sessions import SessionStore

PLAN = {
    "plan_id": "plan-1",
    "version": 1,
    "goal": "rename foo to bar",
    "steps": [
        {"step_id": "s1", "title": "find uses"},
        {"step_id": "s2", "title": "edit"},
        {"step_id": "s3", "title": "test"},
    ],
    "verification": ["pytest"],
}

# A session touching every projection, as (kind, payload) in order.
SCENARIO: list[tuple[str, dict]] = [
    ("SessionStateChanged@v1", {"from_state": "Idle", "to_state": "Planning"}),
    ("TurnAdded@v1", {"role": "user", "content": "rename foo"}),
    ("RouterDecision@v1", {
        "decision_id": "d1", "unit": "planner", "role": "planner", "features": {"prompt_complexity": 0.9},
        "weights": {"prompt_complexity": 0.2}, "contributions": {"prompt_complexity": 0.18},
        "score": 0.81, "threshold": 0.72, "reason_codes": ["COMPLEX_PROMPT"], "profile": "max_think",
        "model": "deepseek-reasoner"}),
    ("LLMCall@v1", {"call_id": "c1", "role": "planner", "profile": "max_think", "model": "deepseek-reasoner",
                    "request_hash": "abc", "usage": {"total_tokens": 10}, "ttft_ms": 5.0}),
    ("PlanCreated@v1", {"plan": PLAN}),
    ("StepMarked@v1", {"plan_id": "plan-1", "step_id": "s1", "status": "done"}),
    ("ToolProposed@v1", {"call_id": "t1", "tool": "fs.read", "arguments": {"path": "a.py"}}),
    ("ToolApproved@v1", {"call_id": "t1", "tool": "fs.read", "answer": "allow"}),
    ("ToolResult@v1", {"call_id": "t1", "tool": "fs.read", "ok": True, "value": {"text": "foo"}}),
    ("PatchStaged@v1", {"patch_id": "p1", "files": ["a.py", "b.py"], "hunks": [
        {"hunk_id": "h1", "file": "a.py"}, {"hunk_id": "h2", "file": "a.py"}, {"hunk_id": "h3", "file": "b.py"}]}),
    ("ApprovalRequested@v1", {"request_id": "r1", "kind": "patch", "title": "apply p1"}),
    ("ApprovalResolved@v1", {"request_id": "r1", "answer": "accept"}),
    ("PatchApplied@v1", {"patch_id": "p1", "hunk_ids": ["h1"], "files": ["a.py"], "via": "workspace/applyEdit",
                         "checkpoint_id": "cp1"}),
    ("PatchConflict@v1", {"patch_id": "p1", "file": "b.py", "reason": "buffer changed", "hunk_ids": ["h3"]}),
    ("PatchRejected@v1", {"patch_id": "p1", "hunk_ids": ["h2"]}),
    ("VerificationRun@v1", {"command": "pytest", "exit_code": 1, "ok": False}),
    ("FailureClassified@v1", {"failure_class": "MechanicalVerifyFailure"}),
    ("RouterEscalation@v1", {"decision_id": "d1", "from_profile": "fast", "to_profile": "max_think",
                             "reason_codes": ["VERIFY_FAILED"]}),
    ("PlanRevised@v1", {"plan": {**PLAN, "version": 2, "steps": [
        *PLAN["steps"], {"step_id": "s4", "title": "fix test"}]}, "previous_version": 1}),
    ("CheckpointRestored@v1", {"checkpoint_id": "cp1", "files": ["a.py"]}),
    ("StepMarked@v1", {"plan_id": "plan-1", "step_id": "s2", "status": "failed", "reason": "tests"}),
    ("SessionStateChanged@v1", {"from_state": "Verifying", "to_state": "Failed"}),
]


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / ".deepseek"


def record(state_dir: Path, events=SCENARIO, prompt="rename foo") -> str:
    store = SessionStore(state_dir, durable=False)
    with store.create("/ws", "agent", prompt) as log:
        for kind, payload in events:
            log.append(kind, payload)
        return log.session_id


def test_session_projection_shows_transcript_plan_patches_tools_router(state_dir):
    sid = record(state_dir)
    p = session_projection(state_dir, sid)
    assert p["session"]["state"] == "Failed"
    assert p["session"]["event_count"] == len(SCENARIO) + 1
    assert p["session"]["last_failure"] == "MechanicalVerifyFailure"
    assert [t["content"] for t in p["transcript"]] == ["rename foo"]
    (plan,) = p["plans"]
    assert plan["version"] == 2
    # The revision kept s1's progress and added s4; s2 failed afterwards.
    assert [(s["step_id"], s["status"]) for s in plan["steps"]] == [
        ("s1", "done"), ("s2", "failed"), ("s3", "pending"), ("s4", "pending")]
    (patch,) = p["patches"]
    assert [(h["hunk_id"], h["status"]) for h in patch["hunks"]] == [
        ("h1", "reverted"), ("h2", "rejected"), ("h3", "conflict")]
    assert patch["hunks"][0]["applied_via"] == "workspace/applyEdit"
    (tool,) = p["tool_invocations"]
    assert (tool["approval"], tool["ok"], tool["value"]) == ("allow", 1, {"text": "foo"})
    assert p["router"]["decisions"][0]["reason_codes"] == ["COMPLEX_PROMPT"]
    assert p["router"]["escalations"][0]["to_profile"] == "max_think"
    assert p["llm_calls"][0]["usage"] == {"total_tokens": 10}
    assert p["approvals"][0]["answer"] == "accept"
    assert p["verifications"][0]["ok"] == 0


def test_rebuild_from_logs_equals_live_projections_synced_in_pieces(state_dir):
    store = SessionStore(state_dir, durable=False)
    projections = Projections(state_dir)
    logs = [store.create("/ws", "agent", f"task {i}") for i in range(3)]
    for i, (kind, payload) in enumerate(SCENARIO):
        if kind == "TurnAdded@v1":
            logs[1 + i % 2].append(kind, payload)
        logs[0].append(kind, payload)
        if i % 4 == 0:
            projections.sync()  # live: a little at a time, like a running session
    logs[1].append("SessionStateChanged@v1", {"from_state": "Idle", "to_state": "Paused"})
    projections.sync()
    live = dump_all(projections)

    projections.rebuild()
    rebuilt = dump_all(projections)
    assert rebuilt == live
    assert live[logs[0].session_id]["session"]["state"] == "Failed"
    assert live[logs[1].session_id]["session"]["state"] == "Paused"
    projections.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(SCENARIO)), max_size=6))
def test_any_sync_schedule_gives_the_same_rows_as_one_rebuild(tmp_path_factory, cuts):
    state_dir = tmp_path_factory.mktemp("state")
    store = SessionStore(state_dir, durable=False)
    projections = Projections(state_dir)
    with store.create("/ws", "agent", "x") as log:
        for i, (kind, payload) in enumerate(SCENARIO):
            if i in cuts:
                projections.sync()
            log.append(kind, payload)
    projections.sync()
    live = dump_all(projections)
    projections.rebuild()
    assert dump_all(projections) == live
    projections.close()


def test_a_line_being_written_is_not_projected_until_complete(state_dir):
    sid = record(state_dir, events=[])
    path = state_dir / "sessions" / sid / "events.jsonl"
    with Projections(state_dir) as projections:
        with open(path, "ab") as fh:
            fh.write(b'{"seq_no":2,')
        projections.sync()
        assert projections.dump_session(sid)["session"]["event_count"] == 1
        assert projections.dump_session(sid)["session"]["log_error"] is None
        # A line whose JSON is whole but whose newline is not written yet: not projected either,
        # by a sync or by a rebuild's fold, which stop before it at the same offset.
        with open(path, "ab") as fh:
            fh.write(b'"ts":"t","kind":"TurnAdded@v1","payload":{"role":"user"}}')
        projections.sync()
        synced = projections.db.execute("SELECT * FROM sessions").fetchall()
        projections._sync_session = None  # the fold alone: no fallback to the SQL path
        projections.rebuild()
        assert projections.db.execute("SELECT * FROM sessions").fetchall() == synced
        assert synced[0][9:11] == (1, path.read_bytes().index(b"\n") + 1)  # event_count, log_offset


def test_schema_version_change_rebuilds_from_the_logs(state_dir):
    sid = record(state_dir)
    with Projections(state_dir) as projections:
        projections.sync()
        before = projections.dump_session(sid)
        projections.db.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
        projections.db.execute("DELETE FROM transcript")
    with Projections(state_dir) as projections:  # sees the old version: rebuilds
        assert projections.db.execute("SELECT COUNT(*) FROM transcript").fetchone() == (0,)
        projections.sync()
        assert projections.dump_session(sid) == before


def test_a_damaged_database_is_replaced_and_rebuilt(state_dir):
    sid = record(state_dir)
    (state_dir / "state.db").write_bytes(b"this is not sqlite" * 100)
    with Projections(state_dir) as projections:
        projections.sync()
        assert projections.dump_session(sid)["session"]["event_count"] == len(SCENARIO) + 1
    assert sqlite3.connect(state_dir / "state.db").execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_busy_database_is_never_taken_for_a_damaged_one(state_dir):
    sid = record(state_dir)
    with Projections(state_dir) as projections:
        projections.sync()
    # Another process holds the write lock past our patience: opening fails, and the
    # database (with every row) is still there, not deleted as "damaged".
    holder = sqlite3.connect(state_dir / "state.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    import deepseek_ls.store.projections as module

    real_connect = sqlite3.connect
    module.sqlite3.connect = lambda *a, **k: real_connect(*a, **{**k, "timeout": 0.05})
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            Projections(state_dir)
    finally:
        module.sqlite3.connect = real_connect
        holder.execute("ROLLBACK")
        holder.close()
    with Projections(state_dir) as projections:
        assert projections.dump_session(sid)["session"]["event_count"] == len(SCENARIO) + 1


def test_many_first_opens_at_once_all_succeed_on_one_database(tmp_path, caplog):
    import threading

    for round_ in range(20):
        state_dir = tmp_path / str(round_) / ".deepseek"
        sid = record(state_dir)
        errors: list[BaseException] = []
        counts: list[int] = []

        def open_and_sync() -> None:
            try:
                with Projections(state_dir) as mine:
                    mine.sync()
                    counts.append(mine.dump_session(sid)["session"]["event_count"])
            except BaseException as error:  # noqa: BLE001 - collected for the assertion
                errors.append(error)

        threads = [threading.Thread(target=open_and_sync) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert counts == [len(SCENARIO) + 1] * 4
    assert "damaged" not in caplog.text


def test_a_corrupt_line_in_the_middle_is_an_altered_log_left_for_a_human(state_dir):
    # Appends never damage earlier lines: one that is not what deepseek-ls appended was edited
    # (store/chain.py), so the session is no longer listed as the person's, and nothing is repaired.
    sid = record(state_dir)
    path = state_dir / "sessions" / sid / "events.jsonl"
    data = path.read_bytes().split(b"\n")
    data[3] = b"garbage"
    path.write_bytes(b"\n".join(data))
    with Projections(state_dir) as projections:
        projections.sync()
        assert projections.dump_session(sid)["session"] is None
    [ignored] = SessionStore(state_dir).ignored()
    assert ignored.session_id == sid and "line 4" in ignored.reason
    assert path.read_bytes() == b"\n".join(data)  # the log is left for a human


def test_sessions_are_listed_newest_first_with_their_state(state_dir):
    store = SessionStore(state_dir, durable=False)
    first = record(state_dir, events=[], prompt="first")
    second = record(state_dir, prompt="second")
    listed = store.list()
    assert [s.session_id for s in listed] == [second, first]
    assert (listed[0].prompt, listed[0].state, listed[1].state) == ("second", "Failed", "Idle")


def test_open_resolves_a_unique_prefix_and_rejects_unknown_ids(state_dir):
    sid = record(state_dir, events=[])
    store = SessionStore(state_dir)
    with store.open(sid[:13]) as log:
        assert log.session_id == sid
        assert log.last_seq == 1
    with pytest.raises(SessionNotFound, match="deepseek-ls sessions"):
        store.open("ffffffff")
    with pytest.raises(SessionNotFound):
        store.open("../../etc")
    with pytest.raises(SessionNotFound):
        session_projection(state_dir, "01900000-0000-7000-8000-00000000dead")


def test_session_ids_are_uuid7_and_sort_by_creation():
    ids = [SessionStore.new_session_id() for _ in range(2000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(is_id(i) and i[14] == "7" and i[19] in "89ab" for i in ids)
    assert abs(uuid7_time_ms(ids[-1]) - time.time() * 1000) < 5000


ids = st.sampled_from(["a", "b", "c"])
hunk_ids = st.lists(st.sampled_from(["h1", "h2", "h3"]), max_size=3, unique=True)
random_event = st.one_of(
    st.builds(lambda p, steps: ("PlanCreated@v1", {"plan": {"plan_id": p, "steps": [{"step_id": s} for s in steps]}}),
              ids, st.lists(ids, max_size=3, unique=True)),
    st.builds(lambda p, steps, v: ("PlanRevised@v1", {"plan": {"plan_id": p, "version": v, "steps": [
        {"step_id": s, "done": d} for s, d in steps]}, "previous_version": v - 1}),
              ids, st.lists(st.tuples(ids, st.booleans()), max_size=3, unique_by=lambda t: t[0]),
              st.integers(2, 5)),
    st.builds(lambda p, s, status: ("StepMarked@v1", {"plan_id": p, "step_id": s, "status": status}),
              ids, ids, st.sampled_from(["running", "done", "failed", "skipped"])),
    st.builds(lambda p: ("PatchStaged@v1", {"patch_id": p, "files": ["x.py", "y.py"], "hunks": [
        {"hunk_id": "h1", "file": "x.py"}, {"hunk_id": "h2", "file": "x.py"}, {"hunk_id": "h3", "file": "y.py"}]}), ids),
    st.builds(lambda p, h, c: ("PatchApplied@v1", {"patch_id": p, "hunk_ids": h, "files": ["x.py"], "checkpoint_id": c}),
              ids, hunk_ids, ids),
    st.builds(lambda p, h: ("PatchRejected@v1", {"patch_id": p, "hunk_ids": h}), ids, hunk_ids),
    st.builds(lambda p, h: ("PatchConflict@v1", {"patch_id": p, "file": "y.py", "reason": "r", "hunk_ids": h}),
              ids, hunk_ids),
    st.builds(lambda c: ("CheckpointRestored@v1", {"checkpoint_id": c, "files": ["x.py"]}), ids),
    st.builds(lambda c: ("ToolProposed@v1", {"call_id": c, "tool": "fs.read", "arguments": {"p": c}}), ids),
    st.builds(lambda c: ("ToolApproved@v1", {"call_id": c, "tool": "fs.read", "answer": "allow"}), ids),
    st.builds(lambda c, ok: ("ToolResult@v1", {"call_id": c, "tool": "fs.read", "ok": ok}), ids, st.booleans()),
    st.builds(lambda r: ("ApprovalRequested@v1", {"request_id": r, "kind": "k", "title": "t"}), ids),
    st.builds(lambda r: ("ApprovalResolved@v1", {"request_id": r, "answer": "yes"}), ids),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(random_event, max_size=25), cuts=st.sets(st.integers(0, 25), max_size=5))
def test_any_event_order_projects_the_same_live_and_rebuilt(tmp_path_factory, events, cuts):
    state_dir = tmp_path_factory.mktemp("state")
    projections = Projections(state_dir)
    with SessionStore(state_dir, durable=False).create("/ws", "agent", "x") as log:
        for i, (kind, payload) in enumerate(events):
            if i in cuts:
                projections.sync()
            log.append(kind, payload)
    projections.sync()
    live = dump_all(projections)
    projections.rebuild()
    assert dump_all(projections) == live
    projections.close()


def test_concurrent_syncers_apply_each_event_once(state_dir):
    import threading

    store = SessionStore(state_dir, durable=False)
    log = store.create("/ws", "agent", "x")
    stop = threading.Event()

    def syncer() -> None:
        with Projections(state_dir) as mine:
            while not stop.is_set():
                mine.sync()

    threads = [threading.Thread(target=syncer) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(300):
        log.append("TurnAdded@v1", {"role": "user", "content": str(i)})
    stop.set()
    for t in threads:
        t.join()
    with Projections(state_dir) as projections:
        projections.sync()
        transcript = projections.dump_session(log.session_id)["transcript"]
    assert [t["content"] for t in transcript] == [str(i) for i in range(300)]
    log.close()


# Every kind the projector handles, with the upserts and odd orders each table must survive:
# a re-proposed call, approvals and results of calls never proposed, a patch staged again with
# other hunks, hunks named by file, steps marked that no plan lists, an answer to no request.
EVERY_KIND = [
    *SCENARIO,
    ("ToolApproved@v1", {"call_id": "t2", "tool": "shell.run", "answer": "deny"}),
    ("ToolResult@v1", {"call_id": "t3", "tool": "fs.write", "ok": False, "error": "refused"}),
    ("ToolProposed@v1", {"call_id": "t1", "tool": "fs.read", "arguments": {"path": "b.py"}}),
    ("ToolApproved@v1", {"call_id": "t1", "tool": "fs.read", "answer": "allow-session"}),
    ("ToolResult@v1", {"call_id": "t2", "tool": "shell.run", "ok": True, "value": [1, 2.5, "é", None]}),
    ("PatchStaged@v1", {"patch_id": "p1", "files": ["c.py"], "diff": "--- c.py", "hunks": [
        {"hunk_id": "h3", "file": "c.py"}, {"id": "h9", "file": "c.py", "status": "pending"}, {"file": "c.py"}]}),
    ("PatchStaged@v1", {"patch_id": "p2", "files": ["d.py"], "hunks": [{"hunk_id": "k1", "file": "d.py"}]}),
    ("PatchApplied@v1", {"patch_id": "p1", "hunk_ids": [], "files": ["c.py"], "checkpoint_id": "cp2"}),
    ("PatchRejected@v1", {"patch_id": "p2", "hunk_ids": []}),
    ("PatchConflict@v1", {"patch_id": "p1", "file": "a.py", "reason": "moved"}),
    ("CheckpointRestored@v1", {"checkpoint_id": "cp2", "files": ["c.py"]}),
    ("StepMarked@v1", {"plan_id": "plan-1", "step_id": "s9", "status": "running"}),
    ("StepMarked@v1", {"plan_id": "plan-2", "step_id": "x", "status": "skipped"}),
    ("PlanRevised@v1", {"plan": {"plan_id": "plan-2", "steps": [{"id": "x"}, {"title": "new"}]}, "previous_version": 4}),
    ("PlanCreated@v1", {"plan": {"goal": {"nested": True}, "steps": "not a list"}}),
    ("ApprovalResolved@v1", {"request_id": "r-none", "answer": "deny"}),
    ("ApprovalRequested@v1", {"request_id": "r1", "kind": "command", "title": "run it", "detail": "again"}),
    ("LLMCall@v1", {"call_id": "c2", "role": "executor", "profile": "fast", "model": "deepseek-chat",
                    "request_hash": "h", "error": "timeout", "retries": 2}),
    ("TurnAdded@v1", {"role": "assistant", "content": "", "tool_calls": [{"id": "t1"}], "agent_role": "executor"}),
    ("VerificationRun@v1", {"command": "pytest -x", "exit_code": None, "ok": True, "duration_ms": 1.5,
                            "fingerprint": "f"}),
    ("SessionStateChanged@v1", {"from_state": "Failed", "to_state": "ExecutingStep", "reason": "resumed"}),
    ("FailureClassified@v1", {"failure_class": "DesignMismatch"}),
    ("SessionStateChanged@v1", {"from_state": "ExecutingStep", "to_state": "Failed", "reason": "again"}),
    ("PolicyDecision@v1", {"subject": "rm -rf", "allowed": False, "rule": "deny"}),  # not projected
]


def _tables(projections: Projections) -> dict[str, list]:
    """Every projection table, every column (JSON columns decoded: their text may be spelled
    differently, never read differently), rows in a fixed order."""
    from deepseek_ls.store.projections import _JSON_COLUMNS
    from deepseek_ls.store.projector import SESSION_TABLES

    out = {}
    for table in ("sessions", *SESSION_TABLES):
        cursor = projections.db.execute(f"SELECT * FROM {table}")
        names = [d[0] for d in cursor.description]
        rows = [{n: (json.loads(v) if n in _JSON_COLUMNS and isinstance(v, str) else v) for n, v in zip(names, row)}
                for row in cursor.fetchall()]
        out[table] = sorted(rows, key=repr)
    return out


def test_a_rebuild_folds_every_event_kind_into_the_rows_the_incremental_path_writes(state_dir):
    from deepseek_ls.store.projector import HANDLERS

    assert set(HANDLERS) - {kind for kind, _ in EVERY_KIND} == {"SessionCreated@v1"}  # store.create writes it
    store = SessionStore(state_dir, durable=False)
    projections = Projections(state_dir)
    with store.create("/ws", "agent", "every kind") as log, store.create("/ws", "plan", "second") as other:
        for kind, payload in EVERY_KIND:
            log.append(kind, payload)
            other.append(kind, payload)
            projections.sync()  # live: one event at a time, the SQL path
    live = _tables(projections)
    assert (len(live["sessions"]), len(live["hunks"]), len(live["tool_invocations"])) == (2, 2 * 5, 2 * 3)

    # The rebuild must fold (fold.py), not fall back to the SQL path, for these logs.
    def no_fallback(sid: str) -> None:
        raise AssertionError(f"session {sid} was projected event by event")

    projections._sync_session = no_fallback  # type: ignore[method-assign]
    projections.rebuild()
    assert _tables(projections) == live
    del projections._sync_session
    projections.rebuild(log.session_id)  # one session alone folds the same
    assert _tables(projections) == live
    with store.open(log.session_id) as again:  # and syncs on top of it
        again.append("PatchApplied@v1", {"patch_id": "p2", "hunk_ids": ["k1"], "files": ["d.py"]})
    projections.sync()
    assert [h["status"] for h in _tables(projections)["hunks"] if h["hunk_id"] == "k1"] == ["applied", "rejected"]
    projections.close()


def test_a_rebuild_writes_tables_longer_than_one_insert_statement_whole(state_dir):
    from deepseek_ls.store.fold import _BATCH

    store = SessionStore(state_dir, durable=False)
    projections = Projections(state_dir)
    with store.create("/ws", "agent", "long") as log:
        for i in range(2 * _BATCH + 3):  # two full statements and a short one
            log.append("TurnAdded@v1", {"role": "user", "content": f"turn {i}"})
            log.append("ToolProposed@v1", {"call_id": f"t{i}", "tool": "fs.read", "arguments": {"n": i}})
    projections.sync()
    live = _tables(projections)
    assert len(live["transcript"]) == 2 * _BATCH + 3 and len(live["tool_invocations"]) == 2 * _BATCH + 3
    projections._sync_session = None  # the fold alone: no fallback to the SQL path
    projections.rebuild()
    assert _tables(projections) == live
    projections.close()
