"""Miscounted hunk headers (the most common defect of real model diffs) are recounted from the
hunk's body, then applied exactly as usual: the context must still match the file line for line.
unidiff trusts the counts, so a header counting too few lines used to drop the rest of its body
(an added line lost, the change of `@@ -4 +4 @@` lost whole) and one counting too many swallowed
the next hunk. A hunk cut short to context alone is refused with a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.patch import PatchError, PatchStore

BASE = "".join(f"line {i}\n" for i in range(1, 13))
G_BASE = "alpha\nbeta\ngamma\n"


def diff(*hunks: str, path: str = "f.txt") -> str:
    return f"--- a/{path}\n+++ b/{path}\n" + "".join(hunks)


# (diff, what f.txt holds after applying it)
CORPUS = [
    pytest.param(diff("@@ -4,2 +4,2 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\n"), id="both-counts-one-too-few"),
    pytest.param(diff("@@ -4,2 +4,2 @@\n line 4\n-line 5\n+LINE 5\n+LINE 5b\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\nLINE 5b\n"), id="too-few-drops-an-added-line"),
    pytest.param(diff("@@ -4,3 +4,2 @@\n line 4\n-line 5\n+LINE 5\n+LINE 5b\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\nLINE 5b\n"), id="new-count-too-few"),
    pytest.param(diff("@@ -4,2 +4,3 @@\n line 4\n-line 5\n-line 6\n+LINE 56\n line 7\n"),
                 BASE.replace("line 5\nline 6\n", "LINE 56\n"), id="old-count-too-few"),
    pytest.param(diff("@@ -4,9 +4,9 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\n"), id="both-counts-too-many"),
    pytest.param(diff("@@ -4,3 +4,7 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\n"), id="new-count-too-many"),
    pytest.param(diff("@@ -4 +4 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\n"), id="missing-counts"),
    pytest.param(diff("@@ -4 +4,4 @@\n line 4\n-line 5\n+LINE 5\n+LINE 5b\n line 6\n"),
                 BASE.replace("line 5\n", "LINE 5\nLINE 5b\n"), id="missing-old-count"),
    pytest.param(diff("@@ -2,2 +2,2 @@\n line 2\n-line 3\n+LINE 3\n line 4\n",
                      "@@ -7,9 +7,1 @@\n line 7\n-line 8\n+LINE 8\n+LINE 8b\n line 9\n",
                      "@@ -11 +12 @@\n line 11\n-line 12\n+LINE 12\n"),
                 BASE.replace("line 3\n", "LINE 3\n").replace("line 8\n", "LINE 8\nLINE 8b\n").replace("line 12\n", "LINE 12\n"),
                 id="three-hunks-each-miscounted"),
    pytest.param(diff("@@ -10,5 +10,5 @@\n line 10\n line 11\n-line 12\n+LINE 12\n"),
                 BASE.replace("line 12\n", "LINE 12\n"), id="last-hunk-at-the-end-of-the-file"),
    pytest.param(diff("@@ -11,1 +11,1 @@\n line 11\n-line 12\n+LINE 12\n\\ No newline at end of file\n"),
                 BASE.replace("line 12\n", "LINE 12"), id="no-newline-at-end-of-file"),
    pytest.param(diff("@@ -4,2 +4,2 @@\n line 4\n-line 5\n+LINE 5\n\n line 6\n"),
                 None, id="blank-line-inside-is-context-and-must-match"),
    pytest.param(diff("@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n\n\n"),
                 BASE.replace("line 5\n", "LINE 5\n"), id="trailing-blank-lines-after-a-right-header"),
]


@pytest.mark.parametrize(("text", "expected"), CORPUS)
def test_miscounted_headers_are_recounted_and_applied_exactly(
    request: pytest.FixtureRequest, workspace: Path, store: PatchStore, text: str, expected
) -> None:
    (workspace / "f.txt").write_text(BASE)
    if expected is None:  # the recounted body holds a line the file does not have there
        with pytest.raises(PatchError):
            store.stage(text)
        assert (workspace / "f.txt").read_text() == BASE
        return
    ps = store.stage(text)
    right_header = "trailing-blank" in request.node.name
    assert [h.recounted for h in ps.hunks] == [not right_header] * len(ps.hunks)  # said in the lens and hover
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.txt").read_text() == expected


def test_the_last_hunk_of_a_file_before_another_file_is_recounted(workspace: Path, store: PatchStore) -> None:
    (workspace / "f.txt").write_text(BASE)
    (workspace / "g.txt").write_text(G_BASE)
    text = (diff("@@ -4,2 +4,2 @@\n line 4\n-line 5\n+LINE 5\n+LINE 5b\n line 6\n")
            + diff("@@ -1,9 +1,9 @@\n alpha\n-beta\n+BETA\n gamma\n", path="g.txt"))
    ps = store.stage(text)
    assert [h.recounted for h in ps.hunks] == [True, True]
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.txt").read_text() == BASE.replace("line 5\n", "LINE 5\nLINE 5b\n")
    assert (workspace / "g.txt").read_text() == "alpha\nBETA\ngamma\n"


def test_recounting_never_loosens_matching(workspace: Path, store: PatchStore) -> None:
    """The trailing context a short header would have dropped must match too: here it does not."""
    (workspace / "f.txt").write_text(BASE)
    with pytest.raises(PatchError):
        store.stage(diff("@@ -4,2 +4,2 @@\n line 4\n-line 5\n+LINE 5\n line 66\n"))
    ps = store.stage(diff("@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n"))
    assert not ps.hunks[0].recounted  # a right header stays as written


@pytest.mark.parametrize("text", [
    pytest.param(diff("@@ -4,5 +4,6 @@\n line 4\n line 5\n"), id="only-context-at-the-end"),
    pytest.param(diff("@@ -4,5 +4,6 @@\n line 4\n", "@@ -8,3 +8,3 @@\n line 8\n-line 9\n+LINE 9\n line 10\n"),
                 id="only-context-before-the-next-hunk"),
])
def test_a_hunk_cut_short_is_refused_with_a_clear_error(workspace: Path, store: PatchStore, text: str) -> None:
    (workspace / "f.txt").write_text(BASE)
    with pytest.raises(PatchError, match=r"hunk 1 .*is cut short.*no changed line.*send the whole hunk"):
        store.stage(text)
    assert (workspace / "f.txt").read_text() == BASE
