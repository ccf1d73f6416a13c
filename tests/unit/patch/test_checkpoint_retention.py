"""Checkpoint retention and the undo on disk (no editor). Retention keeps the newest `keep`
checkpoints and never the newest ones only: a Hetun mission not yet undone keeps its mark and every
apply after it (up to `limit`), so a mission of more applies than `keep` can still be undone in one
action. The disk undo is the editor's in-memory plan written to the files: a mission's mark restores
nothing over later edits, applies are taken out 3-way, an overlap writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.patch.checkpoint import CheckpointStore, UndoRefused

BASE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "m.py").write_text(BASE)
    (tmp_path / "ws" / "other.py").write_text("x = 1\n")
    return tmp_path / "ws"


def disk_apply(store: CheckpointStore, ws: Path, rel: str, text: str) -> str:
    cid = store.create([rel], label="apply", meta={"patch_id": "p"})
    (ws / rel).write_text(text)
    store.record_after(cid, [rel])
    return cid


def mark(store: CheckpointStore, files: list[str]) -> str:
    return store.create(files, label="before mission M1", meta={"mission_id": "M1", "session_id": "s"})


def test_retention_keeps_a_live_mission_of_more_applies_than_keep(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek")
    for i in range(5):  # older history, not part of any mission
        disk_apply(store, ws, "other.py", f"x = {i}\n")
    start = mark(store, ["m.py"])
    chain = [disk_apply(store, ws, "m.py", BASE.replace("a = 1", f"a = {i}")) for i in range(60)]
    names = [m["checkpoint_id"] for m in store.list()]
    assert len(names) == 61 > store.keep and names[0] == start  # the history before the mark went
    assert names == [start, *chain]
    plan = store.restore_on_disk([*reversed(chain), start])
    assert (ws / "m.py").read_text() == BASE and plan.restored == ["m.py"]
    # Undone: the mission no longer holds anything; the next checkpoint prunes back to `keep`.
    disk_apply(store, ws, "other.py", "x = 99\n")
    assert len(store.list()) == store.keep


def test_retention_without_a_mission_keeps_the_newest(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek", keep=50)
    ids = [disk_apply(store, ws, "m.py", f"v{i}\n") for i in range(55)]
    assert [m["checkpoint_id"] for m in store.list()] == ids[-50:]  # the last apply is always among them


def test_retention_a_restored_mission_mark_holds_nothing(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek", keep=3)
    start = mark(store, ["m.py"])
    store.mark_restored([start])
    ids = [disk_apply(store, ws, "m.py", f"v{i}\n") for i in range(5)]
    assert [m["checkpoint_id"] for m in store.list()] == ids[-3:]


def test_retention_limit_bounds_what_a_mission_never_undone_holds(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek", keep=3, limit=5)
    start = mark(store, ["m.py"])
    ids = [disk_apply(store, ws, "m.py", f"v{i}\n") for i in range(4)]
    assert [m["checkpoint_id"] for m in store.list()] == [start, *ids]  # within the limit: all held
    ids.append(disk_apply(store, ws, "m.py", "v4\n"))
    # Past the limit the oldest (the mark) goes; with it the mission's hold, back to the newest `keep`.
    assert [m["checkpoint_id"] for m in store.list()] == ids[-3:]


def test_never_clobber_disk_undo_keeps_edits_after_the_mission(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek")
    start = mark(store, ["m.py", "other.py"])  # other.py: in the mission, never applied to
    applied = disk_apply(store, ws, "m.py", BASE.replace("b = 2", "b = 20"))
    (ws / "m.py").write_text(BASE.replace("b = 2", "b = 20").replace("e = 5", "e = 50"))
    (ws / "other.py").write_text("x = 2  # mine\n")
    plan = store.restore_on_disk([applied, start])
    assert (ws / "m.py").read_text() == BASE.replace("e = 5", "e = 50")
    assert (ws / "other.py").read_text() == "x = 2  # mine\n"
    assert plan.kept == ["other.py"] and [f.path for f in plan.files if f.merged] == ["m.py"]
    assert all(m["restored"] for m in store.list())


def test_never_clobber_disk_undo_overlap_writes_nothing(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek")
    start = mark(store, ["m.py", "other.py"])
    first = disk_apply(store, ws, "other.py", "x = 10\n")
    second = disk_apply(store, ws, "m.py", BASE.replace("b = 2", "b = 20"))
    (ws / "m.py").write_text(BASE.replace("b = 2", "b = 21"))  # the very line the mission changed
    with pytest.raises(UndoRefused) as refused:
        store.restore_on_disk([second, first, start])
    assert refused.value.files == ["m.py"] and "m.py" in str(refused.value)
    assert (ws / "m.py").read_text() == BASE.replace("b = 2", "b = 21")
    assert (ws / "other.py").read_text() == "x = 10\n"  # not restored either: all or nothing
    assert not any(m["restored"] for m in store.list())


def test_never_clobber_latest_mark_alone_restores_nothing_over_edits(ws: Path) -> None:
    store = CheckpointStore(ws, ws / ".deepseek")
    start = mark(store, ["m.py"])
    (ws / "m.py").write_text("mine\n")
    cid, restored, meta = store.restore_latest()
    assert (cid, restored, meta["mission_id"]) == (start, [], "M1")
    assert (ws / "m.py").read_text() == "mine\n"
