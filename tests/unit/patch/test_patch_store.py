"""PatchStore: staging, identity, persistence, per-hunk decisions, checkpoints and undo."""

from __future__ import annotations

from pathlib import Path

import pytest
from patch_helpers import make_store

from deepseek_ls.patch import PatchError, PatchStore, SafetyGate
from deepseek_ls.patch.model import sha256_text
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.sink import ListSink

TWO_HUNKS = (
    "--- a/m.py\n+++ b/m.py\n"
    "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n"
    "@@ -8,3 +8,3 @@\n h = 8\n-i = 9\n+i = 90\n j = 10\n"
)
M_PY = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\nj = 10\n"


@pytest.fixture
def m_py(workspace: Path) -> Path:
    path = workspace / "m.py"
    path.write_text(M_PY)
    return path


def test_staged_hunks_carry_ids_positions_and_text(store: PatchStore, m_py: Path, sink: ListSink) -> None:
    ps = store.stage(TWO_HUNKS, session_id="s1")
    assert ps.files == ["m.py"] and ps.session_id == "s1"
    assert ps.base_sha256 == {"m.py": sha256_text(M_PY)}
    first, second = ps.hunks
    assert (first.old_start, first.old_lines, first.new_start, first.new_lines) == (1, 3, 1, 3)
    assert first.old_text == "a = 1\nb = 2\nc = 3\n" and first.new_text == "a = 1\nb = 20\nc = 3\n"
    assert first.lines == [" a = 1", "-b = 2", "+b = 20", " c = 3"]
    assert first.hunk_id != second.hunk_id and all(h.status == "pending" for h in ps.hunks)
    assert m_py.read_text() == M_PY  # staging never writes
    kind, payload = sink.events[-1]
    assert kind == "PatchStaged@v1" and [h["hunk_id"] for h in payload["hunks"]] == [first.hunk_id, second.hunk_id]


def test_hunk_ids_are_stable_across_stagings(store: PatchStore, m_py: Path) -> None:
    a = store.stage(TWO_HUNKS)
    b = store.stage(TWO_HUNKS.replace("@@ -8,3 +8,3 @@", "@@ -7,3 +7,3 @@"))  # same change, wrong line number
    assert a.patch_id != b.patch_id
    assert [h.hunk_id for h in a.hunks] == [h.hunk_id for h in b.hunks]


def test_patch_sets_survive_a_new_process(workspace: Path, store: PatchStore, m_py: Path) -> None:
    ps = store.stage(TWO_HUNKS)
    store.reject(ps.patch_id, [ps.hunks[0].hunk_id])
    other = make_store(workspace)  # what `deepseek-ls diff` or the language server sees
    again = other.get(ps.patch_id)
    assert [h.status for h in again.hunks] == ["rejected", "pending"]
    assert [p.patch_id for p in other.pending()] == [ps.patch_id]
    other.reject(ps.patch_id)
    assert other.pending() == [] and store.pending() == []


def test_base_is_the_open_buffer_when_there_is_one(workspace: Path, sink: ListSink, m_py: Path) -> None:
    overlay = DocumentOverlay(workspace)
    buffer = M_PY.replace("a = 1\n", "a = 1  # unsaved\n")
    overlay.set("m.py", buffer, 7)
    store = make_store(workspace, sink=sink, overlay=overlay)
    ps = store.stage("--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n a = 1  # unsaved\n-b = 2\n+b = 2000\n")
    assert ps.base_sha256["m.py"] == sha256_text(buffer)


def test_apply_chosen_hunks_then_the_rest(store: PatchStore, m_py: Path) -> None:
    ps = store.stage(TWO_HUNKS)
    first, second = ps.hunks
    result = store.apply(ps.patch_id, hunk_ids=[second.hunk_id])
    assert result.ok and result.applied == [second.hunk_id] and result.checkpoint_id
    assert m_py.read_text() == M_PY.replace("i = 9\n", "i = 90\n")
    assert store.apply(ps.patch_id).applied == [first.hunk_id]
    assert m_py.read_text() == M_PY.replace("i = 9\n", "i = 90\n").replace("b = 2\n", "b = 20\n")
    with pytest.raises(PatchError, match="no longer pending"):
        store.apply(ps.patch_id, hunk_ids=[first.hunk_id])


def test_rejected_hunks_are_remembered_and_not_applied(store: PatchStore, m_py: Path, sink: ListSink) -> None:
    ps = store.stage(TWO_HUNKS)
    store.reject(ps.patch_id, [ps.hunks[0].hunk_id], reason="not wanted")
    assert sink.events[-1] == ("PatchRejected@v1", {"patch_id": ps.patch_id, "hunk_ids": [ps.hunks[0].hunk_id], "reason": "not wanted"})
    store.apply(ps.patch_id)
    assert m_py.read_text() == M_PY.replace("i = 9\n", "i = 90\n")


def test_undo_restores_files_and_reopens_hunks(workspace: Path, store: PatchStore, m_py: Path, sink: ListSink) -> None:
    diff = TWO_HUNKS + "--- /dev/null\n+++ b/new/created.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    ps = store.stage(diff)
    assert store.apply(ps.patch_id).ok
    assert (workspace / "new" / "created.py").read_text() == "x = 1\ny = 2\n"
    assert sorted(store.undo()) == ["m.py", "new/created.py"]
    assert m_py.read_text() == M_PY and not (workspace / "new" / "created.py").exists()
    assert all(h.status == "pending" for h in store.get(ps.patch_id).hunks)
    assert sink.kinds()[-1] == "CheckpointRestored@v1"
    assert store.undo() == []  # nothing left to undo


def test_new_deleted_and_renamed_files(workspace: Path, store: PatchStore) -> None:
    (workspace / "gone.txt").write_text("bye\n")
    (workspace / "old_name.py").write_text("value = 1\n")
    diff = (
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/old_name.py b/new_name.py\nsimilarity index 50%\nrename from old_name.py\nrename to new_name.py\n"
        "--- a/old_name.py\n+++ b/new_name.py\n@@ -1 +1 @@\n-value = 1\n+value = 2\n"
        "diff --git a/empty.txt b/empty.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
    )
    ps = store.stage(diff)
    assert {c.path: c.kind for c in ps.changes.values()} == {"gone.txt": "delete", "new_name.py": "rename", "empty.txt": "add"}
    assert ps.changes["new_name.py"].old_path == "old_name.py"
    assert store.apply(ps.patch_id).ok
    assert not (workspace / "gone.txt").exists() and not (workspace / "old_name.py").exists()
    assert (workspace / "new_name.py").read_text() == "value = 2\n"
    assert (workspace / "empty.txt").read_bytes() == b""


@pytest.mark.parametrize(
    ("diff", "expected"),
    [
        pytest.param("--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", "reserved", id="git-dir"),
        pytest.param("--- a/../x.py\n+++ b/../x.py\n@@ -1 +1 @@\n-a\n+b\n", "'..'", id="dotdot"),
        pytest.param("--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+TOKEN=1\n", "deny-list", id="secret-file"),
        pytest.param("--- a/absent.py\n+++ b/absent.py\n@@ -1 +1 @@\n-a\n+b\n", "does not exist", id="missing-file"),
        pytest.param("--- /dev/null\n+++ b/m.py\n@@ -0,0 +1 @@\n+x\n", "already exists", id="create-existing"),
        pytest.param("diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n", "binary", id="binary"),
        pytest.param("just some prose, not a diff\n", "no file changes", id="not-a-diff"),
        pytest.param("", "empty", id="empty"),
    ],
)
def test_bad_diffs_are_refused_with_a_reason(store: PatchStore, m_py: Path, diff: str, expected: str) -> None:
    with pytest.raises(PatchError) as info:
        store.stage(diff)
    assert expected in str(info.value)
    assert store.pending() == []


def test_files_outside_the_steps_scope_are_refused(store: PatchStore, m_py: Path) -> None:
    with pytest.raises(PatchError, match="not among the files this step may change"):
        store.stage(TWO_HUNKS, allowed_files=["other.py"])
    assert store.stage(TWO_HUNKS, allowed_files=["./m.py"]).files == ["m.py"]


def test_safety_gate_refuses_huge_diffs_and_flags_large_ones(workspace: Path, m_py: Path) -> None:
    tiny = make_store(workspace, gate=SafetyGate(max_diff_bytes=10))
    with pytest.raises(PatchError, match="hard limit"):
        tiny.stage(TWO_HUNKS)  # over 10 x max_diff_bytes: refused
    small = make_store(workspace, gate=SafetyGate(max_diff_bytes=100))
    over = small.stage(TWO_HUNKS)  # over max_diff_bytes: staged, but a person must approve
    assert over.approval_required and "bytes" in over.approval_reasons[0]
    strict = make_store(workspace, gate=SafetyGate(max_files_without_approval=8, max_loc_without_approval=3))
    ps = strict.stage(TWO_HUNKS)
    assert ps.approval_required and "changes 4 lines" in ps.approval_reasons[0]


def test_current_range_follows_the_hunk_in_an_edited_buffer(store: PatchStore, m_py: Path) -> None:
    ps = store.stage(TWO_HUNKS)
    second = ps.hunks[1]
    assert store.current_range(ps.patch_id, second.hunk_id, M_PY) == (7, 10)
    assert store.current_range(ps.patch_id, second.hunk_id, "new\nlines\n" + M_PY) == (9, 12)
    assert store.current_range(ps.patch_id, second.hunk_id, M_PY.replace("i = 9", "i = 9!")) is None


def test_an_applied_hunk_cannot_be_rejected(store: PatchStore, m_py: Path) -> None:
    ps = store.stage(TWO_HUNKS)
    store.apply(ps.patch_id, hunk_ids=[ps.hunks[0].hunk_id])
    with pytest.raises(PatchError, match="already applied"):
        store.reject(ps.patch_id, [ps.hunks[0].hunk_id])
    assert [h.status for h in store.reject(ps.patch_id).hunks] == ["accepted", "rejected"]


def test_only_the_newest_checkpoints_are_kept(workspace: Path, m_py: Path) -> None:
    from deepseek_ls.patch.checkpoint import CheckpointStore

    checkpoints = CheckpointStore(workspace, workspace / ".deepseek", keep=3)
    ids = []
    for i in range(5):
        ids.append(checkpoints.create(["m.py"], label=str(i)))
        m_py.write_text(f"changed {i}\n")
        checkpoints.record_after(ids[-1], ["m.py"])
    assert [c["checkpoint_id"] for c in checkpoints.list()] == ids[-3:]
    assert checkpoints.restore_latest()[0] == ids[-1]
    assert m_py.read_text() == "changed 3\n"
