"""`CheckpointStore.plan_undo`: the in-memory undo the editor lands on its buffers. Each apply is
taken out three-way against the text the person sees now; a mission's mark changes nothing itself;
an overlap refuses everything, naming the files; buffer texts are snapshotted instead of the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.patch.checkpoint import CheckpointStore, UndoRefused

BASE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
APPLIED = BASE.replace("b = 2", "b = 20")


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    (tmp_path / "ws").mkdir()
    return CheckpointStore(tmp_path / "ws", tmp_path / "state")


def editor_apply(store: CheckpointStore, before: dict, after: dict) -> str:
    cid = store.create(sorted({*before, *after}), label="apply", meta={"patch_id": "p"}, texts=before)
    store.record_after(cid, sorted({*before, *after}), texts=after)
    return cid


@pytest.mark.parametrize(("now", "expected"), [
    pytest.param(APPLIED, BASE, id="untouched-since"),
    pytest.param(APPLIED + "f = 6\n", BASE + "f = 6\n", id="typed-below"),
    pytest.param("# top\n" + APPLIED, "# top\n" + BASE, id="typed-above"),
    pytest.param(BASE, BASE, id="already-reverted-by-hand"),
])
def test_never_clobber_plan_undo_keeps_later_typing(store: CheckpointStore, now: str, expected: str) -> None:
    cid = editor_apply(store, {"m.py": BASE}, {"m.py": APPLIED})
    plan = store.plan_undo([cid], {"m.py": now}.get)
    assert plan.restored == ["m.py"]
    assert [(f.path, f.target) for f in plan.files] == ([] if now == expected else [("m.py", expected)])


@pytest.mark.parametrize("now", [
    pytest.param(APPLIED.replace("b = 20", "b = 21"), id="same-line"),
    pytest.param(None, id="deleted"),
])
def test_never_clobber_plan_undo_refuses_an_overlap_naming_the_file(store: CheckpointStore, now) -> None:
    cid = editor_apply(store, {"m.py": BASE, "n.py": "x\n"}, {"m.py": APPLIED, "n.py": "y\n"})
    with pytest.raises(UndoRefused, match="m.py") as refused:
        store.plan_undo([cid], {"m.py": now, "n.py": "y\n"}.get)
    assert refused.value.files == ["m.py"]
    assert not store.list()[0]["restored"]  # planning changes nothing


def test_never_clobber_chain_undo_keeps_typing_between_applies(store: CheckpointStore) -> None:
    """Two applies with typing between them: undoing both takes out both, the typing stays."""
    first = editor_apply(store, {"m.py": BASE}, {"m.py": APPLIED})
    typed = APPLIED.replace("d = 4", "d = 44")
    second_after = typed.replace("a = 1", "a = 10")
    second = editor_apply(store, {"m.py": typed}, {"m.py": second_after})
    plan = store.plan_undo([second, first], {"m.py": second_after}.get)
    assert [(f.path, f.target) for f in plan.files] == [("m.py", BASE.replace("d = 4", "d = 44"))]
    store.mark_restored(plan.checkpoint_ids)
    assert all(m["restored"] for m in store.list())
    with pytest.raises(LookupError):
        store.plan_undo([first], {"m.py": BASE}.get)


def test_never_clobber_a_mark_restores_nothing_and_names_files_changed_without_an_apply(store: CheckpointStore) -> None:
    (store.root / "m.py").write_text(BASE)
    mark = store.create(["m.py", "other.py"], label="mission", texts={"other.py": "o\n"})
    apply = editor_apply(store, {"m.py": BASE}, {"m.py": APPLIED})
    plan = store.plan_undo([apply, mark], {"m.py": APPLIED + "typed\n", "other.py": "o, typed\n"}.get)
    assert [(f.path, f.target) for f in plan.files] == [("m.py", BASE + "typed\n")]
    assert plan.kept == ["other.py"] and plan.restored == ["m.py"]


def test_never_clobber_checkpoint_of_a_dirty_buffer_holds_the_buffer(store: CheckpointStore) -> None:
    (store.root / "m.py").write_text(BASE)
    cid = store.create(["m.py", "new.py"], texts={"m.py": "unsaved\n", "new.py": None})
    manifest = store.list()[0]
    assert (store.dir / cid / "files" / "m.py").read_text() == "unsaved\n"
    assert [e["existed"] for e in manifest["files"]] == [True, False]
    assert (store.root / "m.py").read_text() == BASE


def test_plan_undo_of_a_created_file_removes_it(store: CheckpointStore) -> None:
    cid = editor_apply(store, {"new.py": None}, {"new.py": "made\n"})
    plan = store.plan_undo([cid], {"new.py": "made\n"}.get)
    assert [(f.path, f.target) for f in plan.files] == [("new.py", None)]
