"""SEARCH/REPLACE blocks and whole-file answers become ordinary diffs staged as one PatchSet."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.patch import PatchError, PatchStore
from deepseek_ls.patch.editblock import edit_blocks_to_diff, parse_edit_blocks
from deepseek_ls.patch.wholefile import whole_file_blocks, whole_file_diff


def stage_blocks(store: PatchStore, workspace: Path, answer: str):
    return store.stage(edit_blocks_to_diff(parse_edit_blocks(answer), lambda p: (workspace / p).exists()))


def test_blocks_for_two_files_and_a_new_file_are_one_patchset(workspace: Path, store: PatchStore):
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (workspace / "b.py").write_text("z = 3\n")
    answer = ("a.py\n<<<<<<< SEARCH\ny = 2\n=======\ny = 20\n>>>>>>> REPLACE\n\n"
              "`b.py`\n```\n<<<<<<< SEARCH\nz = 3\n=======\nz = 30\n>>>>>>> REPLACE\n```\n"
              "new/c.py\n<<<<<<< SEARCH\n=======\nc = 1\n>>>>>>> REPLACE\n")
    ps = stage_blocks(store, workspace, answer)
    assert sorted(ps.files) == ["a.py", "b.py", "new/c.py"]
    assert store.apply(ps.patch_id).ok
    assert (workspace / "a.py").read_text() == "x = 1\ny = 20\n"
    assert (workspace / "b.py").read_text() == "z = 30\n"
    assert (workspace / "new" / "c.py").read_text() == "c = 1\n"


@pytest.mark.parametrize("answer, message", [
    pytest.param("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "names no file", id="no-file"),
    pytest.param("a.py\n<<<<<<< SEARCH\na\n>>>>>>> REPLACE\n", "no ======= divider", id="no-divider"),
    pytest.param("a.py\n<<<<<<< SEARCH\na\n=======\nb\n", "not closed", id="unclosed"),
])
def test_malformed_blocks_are_refused_with_the_reason(answer, message):
    with pytest.raises(PatchError, match=message):
        parse_edit_blocks(answer)


def test_never_apply_a_search_that_matches_twice(workspace: Path, store: PatchStore):
    (workspace / "a.py").write_text("v = 1\nw = 0\nv = 1\n")
    with pytest.raises(PatchError, match="ambiguous"):
        stage_blocks(store, workspace, "a.py\n<<<<<<< SEARCH\nv = 1\n=======\nv = 2\n>>>>>>> REPLACE\n")


def test_search_is_placed_by_the_ladder(workspace: Path, store: PatchStore):
    (workspace / "a.py").write_text("def f():\n    return  \u201cx\u201d\n")
    ps = stage_blocks(store, workspace, 'a.py\n<<<<<<< SEARCH\n  return "x"\n=======\n    return "y"\n>>>>>>> REPLACE\n')
    assert ps.hunks[0].located == "unicode"
    assert store.apply(ps.patch_id).ok
    assert (workspace / "a.py").read_text() == 'def f():\n    return "y"\n'


def test_a_snippet_is_not_taken_for_the_whole_file():
    old = "".join(f"line {i}\n" for i in range(40))
    blocks = whole_file_blocks("app.py\n```\nline 3\nline 4 changed\n```\n", {"app.py": old})
    assert whole_file_diff("app.py", old, blocks["app.py"], max_lines=400) is None
    assert whole_file_diff("app.py", old, old.replace("line 4\n", "LINE 4\n"), max_lines=10) is None  # too big
    assert "+LINE 4" in whole_file_diff("app.py", old, old.replace("line 4\n", "LINE 4\n"), max_lines=400)


def test_edit_tool_call_old_string_is_widened_to_its_lines_and_must_be_unique(workspace: Path, store: PatchStore):
    import json

    from deepseek_ls.patch.editblock import blocks_from_edit_calls

    text = "def add(a, b):\n    return a - b  # sum\n"
    (workspace / "a.py").write_text(text)
    call = json.dumps({"path": "a.py", "old_string": "a - b", "new_string": "a + b"})
    blocks = blocks_from_edit_calls([call], {"a.py": text})
    ps = store.stage(edit_blocks_to_diff(blocks, lambda p: True))
    assert store.apply(ps.patch_id).ok
    assert (workspace / "a.py").read_text() == "def add(a, b):\n    return a + b  # sum\n"
    with pytest.raises(PatchError, match="occurs 2 times"):
        blocks_from_edit_calls([json.dumps({"path": "a.py", "old_string": "a", "new_string": "b"})], {"a.py": "a\na\n"})
    with pytest.raises(PatchError, match="needs JSON arguments"):
        blocks_from_edit_calls(['{"path": "a.py"'], {"a.py": text})
