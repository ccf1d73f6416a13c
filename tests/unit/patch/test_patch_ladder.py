"""The match ladder: exact → line endings → trailing whitespace → whitespace → typographic
punctuation; every non-exact placement recorded on the hunk; ambiguous placements refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.agent.executor_parse import extract_diff
from deepseek_ls.patch import PatchError, PatchStore


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("base, context, located", [
    pytest.param("a = 1   \nb = 2\n", " a = 1\n", "trailing_ws", id="trailing-whitespace"),
    pytest.param("a  =  1\nb = 2\n", " a = 1\n", "whitespace", id="inner-whitespace"),
    pytest.param("say(\u201chi\u201d)  # \u2014 ok\nb = 2\n", ' say("hi")  # - ok\n', "unicode", id="smart-quotes-dash"),
    pytest.param("x\u00a0= 1\nb = 2\n", " x = 1\n", "whitespace", id="nbsp-is-whitespace"),
])
def test_ladder_places_the_hunk_and_keeps_the_files_own_context(workspace: Path, store: PatchStore, base, context, located):
    write(workspace, "f.py", base)
    ps = store.stage(f"--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n{context}-b = 2\n+b = 3\n")
    assert ps.hunks[0].located == located
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.py").read_text(encoding="utf-8") == base.replace("b = 2", "b = 3")


def test_exact_match_is_preferred_over_a_looser_one_elsewhere(workspace: Path, store: PatchStore):
    write(workspace, "f.py", "x = 1 \ny = 0\nz\nx = 1\ny = 0\n")
    ps = store.stage("--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 0\n+y = 9\n")
    assert (ps.hunks[0].old_start, ps.hunks[0].located) == (4, "offset")


def test_never_guess_between_equally_near_matches(workspace: Path, store: PatchStore):
    write(workspace, "f.py", "key = 1\nx\nkey = 1\ny\n")
    # Claimed line 3 matches there: fine. Claimed line 2: lines 1 and 3 are equally near.
    assert store.stage("--- a/f.py\n+++ b/f.py\n@@ -3 +3 @@\n-key = 1\n+key = 2\n", persist=False).hunks[0].old_start == 3
    with pytest.raises(PatchError, match="ambiguous.*lines 1 and 3 are equally near"):
        store.stage("--- a/f.py\n+++ b/f.py\n@@ -2 +2 @@\n-key = 1\n+key = 2\n")
    assert (workspace / "f.py").read_text() == "key = 1\nx\nkey = 1\ny\n"


def test_never_guess_where_a_hunk_without_line_numbers_goes(workspace: Path, store: PatchStore):
    write(workspace, "f.py", "x = 1\ny = 0\nx = 1\n")
    with pytest.raises(PatchError, match="ambiguous.*no line numbers"):
        store.stage("--- a/f.py\n+++ b/f.py\n@@ ... @@\n-x = 1\n+x = 2\n")
    ps = store.stage("--- a/f.py\n+++ b/f.py\n@@ ... @@\n-y = 0\n+y = 9\n")  # unique: fine
    assert ps.hunks[0].old_start == 2 and ps.hunks[0].recounted


def test_recounted_header_is_recorded_on_the_hunk(workspace: Path, store: PatchStore):
    write(workspace, "f.py", "a\nb\nc\n")
    ps = store.stage("--- a/f.py\n+++ b/f.py\n@@ -1,9 +1,9 @@\n a\n-b\n+B\n c\n")
    assert ps.hunks[0].recounted and ps.hunks[0].located == "exact"
    exact = store.stage("--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", persist=False)
    assert not exact.hunks[0].recounted


@pytest.mark.parametrize("answer", [
    pytest.param("````diff\n--- a/R.md\n+++ b/R.md\n@@ -1,3 +1,3 @@\n ```sh\n-pip install x\n+pip install y\n ```\n````\n", id="four-backticks"),
    pytest.param("~~~diff\n--- a/R.md\n+++ b/R.md\n@@ -1,3 +1,3 @@\n ```sh\n-pip install x\n+pip install y\n ```\n~~~\n", id="tildes"),
    pytest.param("Sure.\n\n`````patch\n--- a/R.md\n+++ b/R.md\n@@ -1,3 +1,3 @@\n ```sh\n-pip install x\n+pip install y\n ```\n`````\nDone.", id="five-backticks-patch"),
])
def test_fences_of_any_length_hold_diffs_with_fences_inside(workspace: Path, store: PatchStore, answer):
    write(workspace, "R.md", "```sh\npip install x\n```\n")
    ps = store.stage(extract_diff(answer))
    assert store.apply(ps.patch_id).ok
    assert (workspace / "R.md").read_text() == "```sh\npip install y\n```\n"
