"""Stale bases: the target changed between stage and apply. Merge when possible, never clobber."""

from __future__ import annotations

from pathlib import Path

from deepseek_ls.patch import PatchStore
from deepseek_ls.sink import ListSink

BASE = "".join(f"line {i}\n" for i in range(1, 31))
DIFF = (
    "--- a/f.txt\n+++ b/f.txt\n"
    "@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"
    "@@ -20,3 +20,4 @@\n line 20\n line 21\n+inserted after 21\n line 22\n"
)


def setup(workspace: Path, store: PatchStore):
    (workspace / "f.txt").write_text(BASE)
    ps = store.stage(DIFF)
    first, second = ps.hunks
    return ps, first, second


def test_unchanged_buffer_gets_the_hunk_directly(workspace: Path, store: PatchStore) -> None:
    ps, first, _ = setup(workspace, store)
    result = store.merge_hunks(ps.patch_id, [first.hunk_id], "f.txt", BASE)
    assert result.ok and not result.merged
    assert result.text == BASE.replace("line 5\n", "LINE 5\n")


def test_hunks_accepted_one_by_one_in_the_buffer(workspace: Path, store: PatchStore) -> None:
    ps, first, second = setup(workspace, store)
    buffer = store.merge_hunks(ps.patch_id, [first.hunk_id], "f.txt", BASE).text
    store.mark_applied(ps.patch_id, [first.hunk_id])
    result = store.merge_hunks(ps.patch_id, [second.hunk_id], "f.txt", buffer)
    assert result.ok and not result.merged  # the buffer is exactly base + first hunk
    assert result.text == BASE.replace("line 5\n", "LINE 5\n").replace("line 21\n", "line 21\ninserted after 21\n")


def test_user_typing_elsewhere_merges_cleanly(workspace: Path, store: PatchStore) -> None:
    ps, first, _ = setup(workspace, store)
    typed = "# header added by the user\n" + BASE.replace("line 28\n", "line 28 edited\n")
    result = store.merge_hunks(ps.patch_id, [first.hunk_id], "f.txt", typed)
    assert result.ok and result.merged
    assert result.text == typed.replace("line 5\n", "LINE 5\n")


def test_overlapping_user_edit_is_a_conflict_and_nothing_is_returned(workspace: Path, store: PatchStore, sink: ListSink) -> None:
    ps, first, _ = setup(workspace, store)
    typed = BASE.replace("line 5\n", "line five, by the user\n")
    result = store.merge_hunks(ps.patch_id, [first.hunk_id], "f.txt", typed)
    assert not result.ok and result.text is None
    assert "overlap" in result.conflict and "line five, by the user" in result.conflict
    assert "at line 5:" in result.conflict  # a line number in the text the user sees
    assert sink.kinds()[-1] == "PatchConflict@v1"


def test_apply_merges_a_stale_file_on_disk(workspace: Path, store: PatchStore) -> None:
    ps, _, _ = setup(workspace, store)
    (workspace / "f.txt").write_text("top\n" + BASE)
    result = store.apply(ps.patch_id)
    assert result.ok and result.files[0].merged
    assert (workspace / "f.txt").read_text() == "top\n" + BASE.replace("line 5\n", "LINE 5\n").replace(
        "line 21\n", "line 21\ninserted after 21\n"
    )


def test_apply_refuses_a_conflicting_file_and_changes_nothing(workspace: Path, store: PatchStore, sink: ListSink) -> None:
    (workspace / "other.txt").write_text("keep\n")
    (workspace / "f.txt").write_text(BASE)
    ps = store.stage(DIFF + "--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-keep\n+changed\n")
    user_version = BASE.replace("line 21\n", "line 21 (user)\n")
    (workspace / "f.txt").write_text(user_version)
    result = store.apply(ps.patch_id)
    assert not result.ok
    assert "nothing was applied" in result.message and "f.txt" in result.message
    assert (workspace / "f.txt").read_text() == user_version  # never clobbered
    assert (workspace / "other.txt").read_text() == "keep\n"  # all or nothing
    assert all(h.status == "pending" for h in store.get(ps.patch_id).hunks)
    assert "PatchApplied@v1" not in sink.kinds()


def test_apply_after_the_file_was_deleted_is_refused(workspace: Path, store: PatchStore) -> None:
    ps, _, _ = setup(workspace, store)
    (workspace / "f.txt").unlink()
    result = store.apply(ps.patch_id)
    assert not result.ok and "no longer exists" in result.message
    assert not (workspace / "f.txt").exists()
