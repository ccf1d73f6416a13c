"""status(): fresh, stale with exactly the changed paths, corrupt, missing; update() repairs."""

import gc
import json
import threading
import time
import weakref

import pytest

from deepseek_ls.index import IndexUnavailable
from deepseek_ls.index.schema import SCHEMA_VERSION



def changes(status):
    return [(c.change, c.path) for c in status.changed]


def test_missing_before_the_first_build(workspace, make_index):
    index = make_index(workspace)
    assert index.status().state == "missing"
    with pytest.raises(IndexUnavailable, match="missing"):
        index.query("anything")


@pytest.mark.parametrize("kind", ["workspace", "git_workspace"])
def test_edit_add_delete_rename_are_reported_exactly_then_update_makes_it_fresh(kind, request, make_index):
    root = request.getfixturevalue(kind)
    index = make_index(root)
    index.build()
    assert index.status().state == "fresh"

    (root / "app" / "config.py").write_text("def parse_config_v2():\n    pass\n")  # edit
    (root / "app" / "new_module.py").write_text("def brand_new_function():\n    pass\n")  # add
    (root / "README.md").unlink()  # delete
    (root / "web" / "client.ts").rename(root / "web" / "api_client.ts")  # rename

    status = index.status()
    assert status.state == "stale"
    # Path order; a rename is its old path deleted and its new path added.
    assert changes(status) == [
        ("deleted", "README.md"),
        ("modified", "app/config.py"),
        ("added", "app/new_module.py"),
        ("added", "web/api_client.ts"),
        ("deleted", "web/client.ts"),
    ]

    report = index.update()
    assert sorted(report.removed) == ["README.md", "web/client.ts"]
    assert report.files_indexed == 3
    assert index.status().state == "fresh"
    assert [h.path for h in index.query("brand_new_function").hits] == ["app/new_module.py"]
    assert [h.path for h in index.query("fetchUserProfile").hits] == ["web/api_client.ts"]
    assert index.query("parse_config_v2").hits[0].path == "app/config.py"


def test_update_of_named_paths_touches_only_those(workspace, make_index):
    index = make_index(workspace)
    index.build()
    (workspace / "app" / "config.py").write_text("def only_this_changed():\n    pass\n")
    (workspace / "app" / "server.py").write_text("def not_named_in_update():\n    pass\n")

    report = index.update([workspace / "app" / "config.py"])  # absolute, as the editor sends it

    assert report.files_indexed == 1
    assert changes(index.status()) == [("modified", "app/server.py")]


def test_update_of_a_deleted_path_removes_it(workspace, make_index):
    index = make_index(workspace)
    index.build()
    (workspace / "app" / "server.py").unlink()
    report = index.update(["app/server.py"])
    assert report.removed == ["app/server.py"]
    assert index.status().state == "fresh"
    assert all(h.path != "app/server.py" for h in index.query("HTTPServer").hits)


def test_gitignored_files_are_not_indexed_nor_reported(workspace, make_index):
    (workspace / ".gitignore").write_text("build/\n*.log\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.py").write_text("generated_symbol = 1\n")
    (workspace / "debug.log").write_text("generated_symbol\n")
    index = make_index(workspace)
    index.build()
    assert index.query("generated_symbol").hits == []
    (workspace / "build" / "more.py").write_text("x = 1\n")
    assert index.status().state == "fresh"
    index.update(["build/more.py"])  # an editor save inside an ignored directory
    assert index.status().state == "fresh"
    assert "build/more.py" not in index._opened().manifest.file_map


def test_an_edited_gitignore_is_honoured_by_the_next_check(workspace, make_index):
    # Ignore rules remember their answers between checks: an edited .gitignore is new rules.
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "debug.log").write_text("x\n")
    (workspace / "keep.tmp").write_text("x\n")
    index = make_index(workspace)
    index.build()
    assert index.status().state == "fresh"
    (workspace / ".gitignore").write_text("*.tmp\n")
    assert changes(index.status()) == [("modified", ".gitignore"), ("added", "debug.log"), ("deleted", "keep.tmp")]
    index.update()
    (workspace / ".gitignore").write_text("*.log\n")
    assert changes(index.status()) == [("modified", ".gitignore"), ("deleted", "debug.log"), ("added", "keep.tmp")]


def test_git_untracked_ignored_and_committed_changes(git_workspace, make_index, git):
    root = git_workspace
    (root / ".gitignore").write_text("*.tmp\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore tmp")
    index = make_index(root)
    index.build()
    (root / "scratch.tmp").write_text("ignored\n")
    (root / "untracked.py").write_text("def untracked_fn():\n    pass\n")
    assert changes(index.status()) == [("added", "untracked.py")]
    index.update()
    git(root, "add", "untracked.py")
    git(root, "commit", "-q", "-m", "add untracked")
    # Same content, now from a blob of the new HEAD: still fresh.
    assert index.status().state == "fresh"


def _built_and_closed(root, make_index):
    """Build, then let go of the index: damage is done by "another process" while
    nothing of ours has the files mapped (truncating a mapped file is SIGBUS)."""
    index = make_index(root)
    index.build()
    gen_dir = index.dir / index._opened().manifest.storage.generation
    del index
    gc.collect()
    return gen_dir


def test_truncated_segment_file_is_corrupt_and_update_rebuilds(workspace, make_index):
    gen_dir = _built_and_closed(workspace, make_index)
    victim = max((p for p in gen_dir.iterdir() if p.suffix == ".store"), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])

    fresh_view = make_index(workspace)  # another process opening the damaged index
    status = fresh_view.status()
    assert status.state == "corrupt"
    assert "truncated" in status.reason
    with pytest.raises(IndexUnavailable, match="corrupt"):
        fresh_view.query("parse_config")

    report = fresh_view.update()
    assert report.kind == "build"
    assert fresh_view.status().state == "fresh"
    assert fresh_view.query("parse_config").hits


def test_tampered_segment_of_same_size_is_corrupt(workspace, make_index):
    gen_dir = _built_and_closed(workspace, make_index)
    victim = next(p for p in gen_dir.iterdir() if p.suffix == ".term")
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    status = make_index(workspace).status()
    assert status.state == "corrupt"
    assert "tampered" in status.reason


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda m: "{not json", id="not-json"),
        pytest.param(lambda m: json.dumps({**json.loads(m), "schema_version": SCHEMA_VERSION + 1}), id="schema-mismatch"),
        pytest.param(lambda m: json.dumps({k: v for k, v in json.loads(m).items() if k != "files"}), id="missing-field"),
        pytest.param(lambda m: m[: len(m) // 3], id="truncated"),
    ],
)
def test_damaged_manifest_is_corrupt_and_never_trusted(workspace, damage, make_index):
    index = make_index(workspace)
    index.build()
    manifest = index.manifest_path.read_text()
    index.manifest_path.write_text(damage(manifest))
    status = make_index(workspace).status()
    assert status.state == "corrupt"
    rebuilt = make_index(workspace)
    rebuilt.update()
    assert rebuilt.status().state == "fresh"


def test_query_reports_stale_after_a_change_once_the_ttl_expires(workspace, make_index):
    index = make_index(workspace, freshness_ttl_seconds=0)
    index.build()
    assert index.query("parse_config").fresh is True
    (workspace / "app" / "config.py").write_text("changed = True\n")
    assert index.query("parse_config").fresh is False
    index.update(["app/config.py"])
    assert index.query("changed").fresh is True


def test_query_freshness_is_rechecked_off_the_query_path_and_flips_soon_after_a_change(workspace, make_index, monkeypatch):
    # With a positive TTL a query never walks the workspace itself: it answers with
    # the last check and starts a re-check in a background thread, so `fresh` turns
    # false soon after a file changes (and true again after the update).
    index = make_index(workspace, freshness_ttl_seconds=0.05)
    index.build()
    query_thread = threading.get_ident()
    checked_in: list[int] = []
    status = index.status

    def recording_status():
        checked_in.append(threading.get_ident())
        return status()

    monkeypatch.setattr(index, "status", recording_status)
    assert index.query("parse_config").fresh is True
    (workspace / "app" / "config.py").write_text("changed = True\n")
    assert wait_for(lambda: index.query("parse_config").fresh is False)
    index.update(["app/config.py"])
    assert wait_for(lambda: index.query("changed").fresh is True)
    assert checked_in and query_thread not in checked_in  # every check ran in the background


def test_no_leak_an_index_with_a_background_recheck_can_still_be_collected(workspace, make_index):
    index = make_index(workspace, freshness_ttl_seconds=0.01)
    index.build()
    assert wait_for(lambda: index.query("parse_config") is not None and index._rechecker is not None)
    gone = weakref.ref(index)
    del index
    assert wait_for(lambda: gc.collect() is not None and gone() is None, timeout=10.0)  # the thread idles 30 s


def test_a_new_instance_answers_its_first_query_with_a_real_check(workspace, make_index):
    make_index(workspace).build()
    (workspace / "README.md").write_text("changed\n")
    assert make_index(workspace).query("parse_config").fresh is False  # nothing known yet: checked inline


def wait_for(condition, timeout: float = 30.0, step: float = 0.02) -> bool:
    """Poll until `condition()` holds (a generous bound, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


@pytest.mark.parametrize("kind", ["workspace", "git_workspace"])
def test_configured_excludes_apply_on_top_of_gitignore(kind, request, make_index):
    root = request.getfixturevalue(kind)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("function vendored_thing() {}\n")
    (root / "web" / "bundle.min.js").write_text("function vendored_thing(){}\n")
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("vendored_thing = 1\n")
    index = make_index(root, exclude=["node_modules/", "*.min.js"])
    index.build()
    assert [h.path for h in index.query("vendored_thing").hits] == ["generated/out.py"]
    index.update(["node_modules/dep/index.js"])  # a save event inside an excluded directory
    assert index.status().state == "fresh"
    assert index.status().changed == []
