"""Readers and writers at the same time: queries in one thread while another
updates; a second writer (another process) rebuilding under a live reader."""

import subprocess
import sys
import threading


def test_queries_keep_answering_while_another_thread_updates(workspace, make_index):
    index = make_index(workspace, freshness_ttl_seconds=0)  # every query re-checks freshness too
    index.build()
    errors: list[BaseException] = []
    done = threading.Event()

    def writer():
        try:
            for i in range(8):
                (workspace / "app" / "config.py").write_text(f"def version_{i}():\n    pass\n")
                index.update(["app/config.py"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    answered = 0
    while not done.is_set() or answered < 5:
        try:
            assert index.query("HTTPServer").hits[0].path == "app/server.py"
            answered += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            break
    thread.join()
    assert errors == []
    assert [h.path for h in index.query("version_7").hits] == ["app/config.py"]
    assert index.status().state == "fresh"


def test_a_reader_follows_a_rebuild_done_by_another_process(workspace, make_index):
    reader = make_index(workspace)
    reader.build()
    old_generation = reader._opened().manifest.storage.generation
    (workspace / "late.py").write_text("def added_by_other_process():\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from deepseek_ls.index import CodeIndex; "
         "root = Path(sys.argv[1]); CodeIndex(root, root / '.deepseek').build()",
         str(workspace)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    hits = reader.query("added_by_other_process").hits
    assert [h.path for h in hits] == ["late.py"]
    assert reader._opened().manifest.storage.generation != old_generation


def test_many_saves_trigger_background_merges_and_the_index_stays_verifiable(workspace, make_index):
    """tantivy merges segments after about every 8th commit; updates return
    without waiting and record the merged files afterwards. Another reader
    opening at any moment must find a consistent index, never a corrupt one."""
    index = make_index(workspace)
    index.build()
    for i in range(20):
        (workspace / "app" / "config.py").write_text(f"def save_number_{i}():\n    pass\n")
        index.update(["app/config.py"])
        other = make_index(workspace)  # "another process" opening right now
        assert other.status().state == "fresh"
        assert [h.path for h in other.query(f"save_number_{i}").hits] == ["app/config.py"]
    assert index.wait_idle(timeout=60)
    settled = make_index(workspace)._opened().manifest.storage
    segments = {name.split(".")[0] for name in settled.files if name != "meta.json"}
    assert len(segments) < 8  # merges happened and were recorded
