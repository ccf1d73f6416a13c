"""build(): skipped files, progress, cancellation, files that change mid-build, the write lock."""

import threading

import pytest

from deepseek_ls.index import BuildCancelled, IndexBusy


def test_binary_and_oversized_files_are_skipped_and_reported(workspace, make_index):
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    (workspace / "huge.py").write_text("x = 1\n" * 400)  # 2,400 bytes
    index = make_index(workspace, max_file_bytes=2000)
    report = index.build()
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped == {"logo.png": "binary", "huge.py": "too_large"}
    assert report.total_files == 6
    # skipped files are still part of the snapshot: no spurious "added" in status
    assert index.status().state == "fresh"
    (workspace / "huge.py").write_text("small = True\n")
    assert [(c.change, c.path) for c in index.status().changed] == [("modified", "huge.py")]
    index.update()
    assert [h.path for h in index.query("small").hits] == ["huge.py"]


def test_progress_counts_every_file_with_a_rate(workspace, make_index):
    seen = []
    make_index(workspace).build(progress=seen.append)
    assert [p.done for p in seen] == list(range(1, 7))
    assert all(p.total == 6 for p in seen)
    assert all(p.files_per_second > 0 for p in seen)
    assert [p.path for p in seen] == sorted(p.path for p in seen)  # stable path order


def test_cancelled_build_leaves_the_previous_index_untouched(workspace, make_index):
    index = make_index(workspace)
    index.build()
    before = index._opened().manifest
    cancel = threading.Event()

    def stop_halfway(progress):
        if progress.done == 3:
            (workspace / "app" / "config.py").write_text("def only_in_the_cancelled_build():\n    pass\n")
            cancel.set()

    with pytest.raises(BuildCancelled):
        index.build(progress=stop_halfway, cancel=cancel)
    assert index._opened().manifest == before
    assert sorted(p.name for p in index.dir.iterdir() if p.name.startswith("gen-")) == [before.storage.generation]
    assert index.query("parse_config").hits  # still answers from the old index


def test_a_file_changed_after_it_was_read_is_read_again_alone(workspace, make_index):
    index = make_index(workspace)

    def edit_an_already_read_file(progress):
        if progress.done == 4:  # "app/config.py" (2nd in path order) was read already
            (workspace / "app" / "config.py").write_text("def written_during_build():\n    pass\n")

    report = index.build(progress=edit_an_already_read_file)
    assert report.restarted == ["app/config.py"]
    assert [h.path for h in index.query("written_during_build").hits] == ["app/config.py"]
    assert index.status().state == "fresh"


def test_no_leak_a_link_swapped_in_after_the_walk_is_not_followed(workspace, make_index, tmp_path):
    # The walk never follows links; a file replaced by one before the build reads it
    # (pointing out of the workspace, at a secret) must not be read through it.
    outside = tmp_path / "outside.txt"
    outside.write_text("canary_3c1f9e outside the workspace\n")
    index = make_index(workspace)
    last = max(str(p.relative_to(workspace)) for p in workspace.rglob("*") if p.is_file())

    def swap_the_last_file_for_a_link(progress):
        if progress.done == 1:
            (workspace / last).unlink()
            (workspace / last).symlink_to(outside)

    report = index.build(progress=swap_the_last_file_for_a_link)
    assert index.query("canary_3c1f9e").hits == []
    assert [(s.path, s.reason) for s in report.skipped] == [(last, "unreadable")]


def test_a_second_writer_waits_for_the_lock_then_gives_a_clear_error(workspace, make_index):
    holder = make_index(workspace)
    other = make_index(workspace)
    other.lock_timeout = 0.2
    with holder._locked():
        with pytest.raises(IndexBusy, match="another process"):
            other.build()
    other.build()  # free again


def test_build_in_an_empty_workspace(tmp_path, make_index):
    root = tmp_path / "empty"
    root.mkdir()
    index = make_index(root)
    report = index.build()
    assert report.total_files == 0
    assert index.query("anything").hits == []
    assert index.status().state == "fresh"


def test_a_file_name_that_is_not_utf8_is_left_out_not_fatal(workspace, make_index):
    import os

    os.close(os.open(os.path.join(os.fsencode(workspace), b"bad-\xff-name.py"), os.O_CREAT | os.O_WRONLY))
    index = make_index(workspace)
    report = index.build()
    assert report.total_files == 6
    assert index.status().state == "fresh"


def test_cancelling_a_parallel_build_stops_the_workers_and_leaves_nothing_behind(tmp_path, make_index):
    from deepseek_ls.index.build import PARALLEL_MIN_FILES

    root = tmp_path / "big"
    for i in range(PARALLEL_MIN_FILES + 60):
        path = root / f"m{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f_{i}():\n    return {i}\n")
    index = make_index(root, build_workers=2)
    cancel = threading.Event()

    def stop_early(progress):
        if progress.done == 50:
            cancel.set()

    with pytest.raises(BuildCancelled):
        index.build(progress=stop_early, cancel=cancel)
    assert index.status().state == "missing"
    assert not [p for p in index.dir.iterdir() if p.name.startswith("gen-")]


def test_build_finishes_in_process_when_worker_processes_cannot_start(tmp_path):
    """`python -` (script on stdin) cannot spawn workers: the build must still succeed."""
    import subprocess
    import sys

    from deepseek_ls.index.build import PARALLEL_MIN_FILES

    root = tmp_path / "ws"
    root.mkdir()
    for i in range(PARALLEL_MIN_FILES + 20):
        (root / f"m{i:03d}.py").write_text(f"def func_{i}():\n    pass\n")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from deepseek_ls.config_models import IndexConfig\n"
        "from deepseek_ls.index import CodeIndex\n"
        "root = Path(sys.argv[1])\n"
        "index = CodeIndex(root, root / '.deepseek', IndexConfig(build_workers=2))\n"
        "print(index.build().total_files, index.query('func_77').hits[0].path)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-", str(root)], input=script, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[0] == str(PARALLEL_MIN_FILES + 20)
    assert proc.stdout.split()[1] == "m077.py"
    assert "analysing files in this process" in proc.stderr
