"""Model diffs are often slightly wrong: hunks are located by their context."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.patch import PatchError, PatchStore

BASE = "".join(f"line {i}\n" for i in range(1, 41))


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def test_exact_position_is_used_as_is(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", BASE)
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n line 9\n-line 10\n+LINE 10\n line 11\n")
    hunk = ps.hunks[0]
    assert (hunk.old_start, hunk.located, hunk.offset) == (9, "exact", 0)


@pytest.mark.parametrize("claimed", [1, 5, 30, 400], ids=["far-before", "before", "after", "past-the-end"])
def test_wrong_line_numbers_are_located_by_context(workspace: Path, store: PatchStore, claimed: int) -> None:
    write(workspace, "f.txt", BASE)
    ps = store.stage(f"--- a/f.txt\n+++ b/f.txt\n@@ -{claimed},3 +{claimed},3 @@\n line 19\n-line 20\n+LINE 20\n line 21\n")
    hunk = ps.hunks[0]
    assert hunk.old_start == 19 and hunk.located == "offset" and hunk.offset == 19 - claimed
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.txt").read_text() == BASE.replace("line 20\n", "LINE 20\n")


def test_nearest_of_several_matches_wins(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", "x\nsame\nx\n" * 5)
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ -10,1 +10,1 @@\n-same\n+SAME\n")
    assert ps.hunks[0].old_start == 11  # occurrences at 2, 5, 8, 11, 14; 11 is nearest to the claimed 10


def test_whitespace_differences_in_context_are_tolerated(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.py", "def f():\n    if x:\n        return 1\n    return 2\n")
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,4 +1,4 @@\n def f():\n  if x:\n-      return 1\n+        return 10\n    return 2\n"
    ps = store.stage(diff)
    assert ps.hunks[0].located == "whitespace"
    assert store.apply(ps.patch_id).ok
    # Context lines keep the file's own indentation; the added line is the model's.
    assert (workspace / "f.py").read_text() == "def f():\n    if x:\n        return 10\n    return 2\n"


def test_lf_diff_against_crlf_file_keeps_crlf(workspace: Path, store: PatchStore) -> None:
    write(workspace, "w.txt", b"a\r\nb\r\nc\r\n")
    ps = store.stage("--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n")
    assert ps.hunks[0].located == "eol"
    assert store.apply(ps.patch_id).ok
    assert (workspace / "w.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"


def test_miscounted_hunk_header_is_recounted(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", BASE)
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,2 @@\n line 3\n-line 4\n+LINE 4\n+LINE 4b\n line 5\n")
    assert (ps.hunks[0].old_lines, ps.hunks[0].new_lines) == (3, 4)
    assert store.apply(ps.patch_id).ok
    assert "LINE 4\nLINE 4b\nline 5\n" in (workspace / "f.txt").read_text()


def test_hunk_header_without_numbers_is_located(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", BASE)
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ ... @@\n line 33\n-line 34\n+LINE 34\n")
    assert ps.hunks[0].old_start == 33


def test_hunks_keep_their_order_and_do_not_overlap(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", "a\nb\na\nb\n")
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B1\n@@ -1,2 +1,2 @@\n a\n-b\n+B2\n")
    assert [h.old_start for h in ps.hunks] == [1, 3]
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.txt").read_text() == "a\nB1\na\nB2\n"


def test_unlocatable_hunk_is_reported_with_the_nearest_candidate(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", BASE)
    diff = "--- a/f.txt\n+++ b/f.txt\n@@ -12,3 +12,3 @@\n line 12\n-line thirteen\n+LINE 13\n line 14\n"
    with pytest.raises(PatchError) as info:
        store.stage(diff)
    message = str(info.value)
    assert "f.txt" in message
    assert "nearest candidate at line 12" in message
    assert "2/3 lines match" in message
    assert "expected 'line thirteen', found 'line 13'" in message
    assert not list((workspace / ".deepseek" / "patches").glob("*.json"))  # nothing staged


def test_every_failing_file_is_reported_at_once(workspace: Path, store: PatchStore) -> None:
    write(workspace, "a.txt", "a\n")
    diff = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+y\n"
        "--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n"
    )
    with pytest.raises(PatchError) as info:
        store.stage(diff)
    problems = info.value.problems
    assert any(p.startswith(".env:") and "deny-list" in p for p in problems)
    # Policy problems are reported first, before any file is read.
    assert len(problems) == 1


def test_lines_added_after_a_last_line_without_newline_do_not_join(workspace: Path, store: PatchStore) -> None:
    write(workspace, "f.txt", b"a\nb")  # no final newline; the model's diff does not say so
    ps = store.stage("--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,3 @@\n a\n b\n+c\n")
    assert store.apply(ps.patch_id).ok
    assert (workspace / "f.txt").read_bytes() == b"a\nb\nc\n"


def test_context_seen_through_the_redactor_is_located_and_the_secret_kept(workspace: Path, store: PatchStore) -> None:
    # The model saw `API_KEY = "[REDACTED:keyword]"`; the file has the real value.
    write(workspace, "settings.py", 'DEBUG = False\nAPI_KEY = "Zx8Qw2Lp9Rt5Yu3I"\nTIMEOUT = 5\n')
    diff = (
        "--- a/settings.py\n+++ b/settings.py\n@@ -1,3 +1,4 @@\n DEBUG = False\n"
        ' API_KEY = "[REDACTED:keyword]"\n-TIMEOUT = 5\n+TIMEOUT = 10\n+RETRIES = 3\n'
    )
    ps = store.stage(diff)
    assert ps.hunks[0].located == "redacted"
    assert store.apply(ps.patch_id).ok
    assert (workspace / "settings.py").read_text() == 'DEBUG = False\nAPI_KEY = "Zx8Qw2Lp9Rt5Yu3I"\nTIMEOUT = 10\nRETRIES = 3\n'


@pytest.mark.parametrize(
    "added",
    [
        pytest.param('+API_KEY = "[REDACTED:keyword]"  # rotated yearly', id="same-line-rewritten"),
        pytest.param('+print("[REDACTED:keyword]")', id="copied-into-a-print"),
        pytest.param('+LOG_KEY = "[REDACTED:keyword]"', id="copied-to-another-name"),
    ],
)
def test_no_leak_placeholder_is_never_mapped_back_to_the_secret(workspace: Path, store: PatchStore, added: str) -> None:
    write(workspace, "settings.py", 'DEBUG = False\nAPI_KEY = "Zx8Qw2Lp9Rt5Yu3I"\nTIMEOUT = 5\n')
    diff = (
        "--- a/settings.py\n+++ b/settings.py\n@@ -1,3 +1,3 @@\n DEBUG = False\n"
        f'-API_KEY = "[REDACTED:keyword]"\n{added}\n TIMEOUT = 5\n'
    )
    with pytest.raises(PatchError, match="never turned back into the secret"):
        store.stage(diff)
    assert (workspace / "settings.py").read_text().count("Zx8Qw2Lp9Rt5Yu3I") == 1


def test_a_placeholder_is_never_written_into_a_file(workspace: Path, store: PatchStore) -> None:
    write(workspace, "settings.py", "DEBUG = False\n")
    diff = '--- a/settings.py\n+++ b/settings.py\n@@ -1 +1,2 @@\n DEBUG = False\n+TOKEN = "[REDACTED:keyword]"\n'
    with pytest.raises(PatchError, match="redaction placeholder"):
        store.stage(diff)
    assert (workspace / "settings.py").read_text() == "DEBUG = False\n"


def test_a_file_that_really_contains_placeholder_text_can_be_edited(workspace: Path, store: PatchStore) -> None:
    write(workspace, "test_x.py", 'assert out == "[REDACTED:jwt]"\n')
    diff = '--- a/test_x.py\n+++ b/test_x.py\n@@ -1 +1,2 @@\n assert out == "[REDACTED:jwt]"\n+assert again == "[REDACTED:jwt]"\n'
    ps = store.stage(diff)
    assert ps.hunks[0].located == "exact"
    assert store.apply(ps.patch_id).ok
    assert (workspace / "test_x.py").read_text().count("[REDACTED:jwt]") == 2
