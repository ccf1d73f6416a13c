"""The tantivy writer kept open between saves: reused while saves come, handed
back (merges recorded, lock released) to a build here or a writer elsewhere."""

import subprocess
import sys


def test_saves_back_to_back_share_one_writer_which_then_closes_and_is_recorded(workspace, make_index):
    index = make_index(workspace)
    index.writer_linger, index.writer_max_hold = 30.0, 60.0  # no closing by the clock on a slow machine
    index.build()
    sessions = set()
    for i in range(12):  # enough commits for tantivy to merge while the writer is open
        (workspace / "app" / "config.py").write_text(f"def kept_open_{i}():\n    pass\n")
        index.update(["app/config.py"])
        sessions.add(id(index._session))
        assert [h.path for h in index.query(f"kept_open_{i}").hits] == ["app/config.py"]
    assert len(sessions) == 1 and None not in sessions
    assert index.wait_idle(timeout=60)
    assert index._session is None
    fresh = make_index(workspace)  # verifies every recorded segment file against the manifest
    assert fresh.status().state == "fresh"
    assert [h.path for h in fresh.query("kept_open_11").hits] == ["app/config.py"]


def test_another_process_gets_the_write_lock_while_this_one_keeps_its_writer(workspace, make_index):
    index = make_index(workspace)
    index.writer_linger = 5.0
    index.build()
    (workspace / "app" / "config.py").write_text("def saved_here():\n    pass\n")
    index.update(["app/config.py"])
    assert index._session is not None  # holding write.lock until it lingers out (5 s)
    (workspace / "other.py").write_text("def written_by_other_process():\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from deepseek_ls.index import CodeIndex; "
         "root = Path(sys.argv[1]); i = CodeIndex(root, root / '.deepseek'); i.lock_timeout = 30; "
         "r = i.update(['other.py']); assert r.files_indexed == 1, r",
         str(workspace)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert [h.path for h in index.query("written_by_other_process").hits] == ["other.py"]
    assert [h.path for h in index.query("saved_here").hits] == ["app/config.py"]
    assert index.status().state == "fresh"


def test_a_build_after_saves_closes_the_kept_writer_first(workspace, make_index):
    index = make_index(workspace)
    index.writer_linger = 30.0
    index.build()
    (workspace / "app" / "config.py").write_text("def before_rebuild():\n    pass\n")
    index.update(["app/config.py"])
    old = index._session
    assert old is not None
    report = index.build()
    assert old.closed.is_set() and index._session is None
    assert report.generation == index._opened().manifest.storage.generation
    assert [h.path for h in index.query("before_rebuild").hits] == ["app/config.py"]
    (workspace / "app" / "config.py").write_text("def after_rebuild():\n    pass\n")
    index.update(["app/config.py"])  # a new writer on the new generation
    assert [h.path for h in index.query("after_rebuild").hits] == ["app/config.py"]
    assert index.wait_idle(timeout=60)
    assert make_index(workspace).status().state == "fresh"
