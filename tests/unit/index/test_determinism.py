"""Two builds of the same inputs give the same manifest and the same answers."""

import shutil

import pytest


QUERIES = ["parse_config", "HTTPServer", "user profile", "Parser", "config", "camel"]


def answers(index):
    return [index.query(q, top_k=10).model_dump() for q in QUERIES]


@pytest.mark.parametrize("kind", ["workspace", "git_workspace"])
def test_rebuilding_gives_identical_manifest_and_results(kind, request, make_index):
    root = request.getfixturevalue(kind)
    index = make_index(root)
    index.build()
    first_manifest = index._opened().manifest
    first_answers = answers(index)

    index.build()
    second_manifest = index._opened().manifest

    assert second_manifest.storage.generation != first_manifest.storage.generation  # really rebuilt
    assert second_manifest.identity() == first_manifest.identity()
    assert answers(index) == first_answers


def test_copies_of_a_tree_in_different_places_have_the_same_identity(workspace, tmp_path, make_index):
    copy = tmp_path / "elsewhere" / "ws"
    shutil.copytree(workspace, copy)
    a, b = make_index(workspace), make_index(copy)
    a.build()
    b.build()
    assert a._opened().manifest.identity() == b._opened().manifest.identity()
    assert answers(a) == answers(b)


def test_git_build_reads_the_baseline_commit_plus_working_tree_overlay(git_workspace, make_index, git):
    head = git(git_workspace, "rev-parse", "HEAD").strip()
    (git_workspace / "app" / "config.py").write_text("def edited_not_committed():\n    pass\n")
    index = make_index(git_workspace)
    index.build()
    manifest = index._opened().manifest
    assert manifest.baseline_commit == head
    hits = index.query("edited_not_committed").hits
    assert [h.path for h in hits] == ["app/config.py"]
    assert index.status().state == "fresh"


def test_worker_processes_and_in_process_builds_agree(tmp_path, make_index):
    from deepseek_ls.index.build import PARALLEL_MIN_FILES

    root = tmp_path / "many"
    for i in range(PARALLEL_MIN_FILES + 10):
        path = root / f"pkg{i % 7}" / f"mod_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def handler_{i}(requestBody):\n    return requestBody.get('k{i}')\n\nclass Model{i}:\n    pass\n")
    (root / "blob.bin").write_bytes(b"\x00" * 10)
    serial = make_index(root, build_workers=1)
    serial.build()
    serial_identity = serial._opened().manifest.identity()
    serial_answers = [serial.query(q, top_k=5).model_dump() for q in ("handler_7", "request body", "Model42")]
    serial_map = serial.repo_map(token_budget=300)

    parallel = make_index(root, build_workers=2)
    parallel.build()
    assert parallel._opened().manifest.identity() == serial_identity
    assert [parallel.query(q, top_k=5).model_dump() for q in ("handler_7", "request body", "Model42")] == serial_answers
    assert parallel.repo_map(token_budget=300) == serial_map


def test_several_indexing_threads_give_what_one_gives(tmp_path, make_index):
    """A full build may index with several tantivy threads (a segment each): the same
    manifest, answers and repo map as with one, ties included (files of equal score
    come back in path order, whichever segment holds them)."""
    root = tmp_path / "ties"
    for i in range(400):
        path = root / f"pkg{i % 5}" / f"mod_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "def handler(requestBody):\n    return requestBody\n" if i % 2 else f"class Model{i}:\n    handler = 1\n"
        path.write_text(body + "# padding\n" * 200)
    queries = ("handler", "request body", "Model42", "padding")

    one = make_index(root, build_threads=1)
    one.build()
    assert one._opened().searcher.num_segments == 1
    identity = one._opened().manifest.identity()
    expected = [one.query(q, top_k=7).model_dump() for q in queries]
    repo_map = one.repo_map(query="handler", token_budget=400)

    several = make_index(root, build_threads=4)
    several.build()
    assert several._opened().searcher.num_segments > 1  # really written by several threads
    assert several._opened().manifest.identity() == identity
    assert [several.query(q, top_k=7).model_dump() for q in queries] == expected
    assert several.repo_map(query="handler", token_budget=400) == repo_map
