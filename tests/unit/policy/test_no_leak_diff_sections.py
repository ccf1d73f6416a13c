"""`policy/diff_secrets.hide_secret_diffs`: which sections of git's patch output are hidden.

The blob lookup is a plain table here; tests/scenarios/test_no_leak_git_patch_secrets.py runs
it against real git through the agent."""

from __future__ import annotations

import pytest

from deepseek_ls.policy.diff_secrets import hide_secret_diffs

SECRET, PLAIN = "1111111", "2222222"


def kinds(pairs):
    table = {SECRET: "netrc", PLAIN: None, "0000000": None}
    return {blob: table.get(blob, "unknown") for blob, _ in pairs}


def section(path: str, old: str, new: str, body: str = "-a\n+b\n") -> str:
    return f"diff --git a/{path} b/{path}\nindex {old}..{new} 100644\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n{body}"


CASES = [
    pytest.param(section("hosts", PLAIN, SECRET, "+password s3\n"), ["hosts"], id="new-side-secret"),
    pytest.param(section("hosts", SECRET, "0000000", "-password s3\n"), ["hosts"], id="deleted-secret"),
    pytest.param(section("x.txt", "abcdef1", PLAIN, "+password s3\n"), ["x.txt"], id="unknown-blob"),
    pytest.param("diff --git a/x b/x\n@@ -1 +1 @@\n+password s3\n", ["x"], id="hunks-without-index-line"),
    pytest.param(f"diff --cc x\nindex {PLAIN},{SECRET}..{PLAIN}\n@@@ -1,1 -1,1 +1,1 @@@\n++password s3\n", ["x"],
                 id="combined-diff"),
    pytest.param(section("a.py", PLAIN, PLAIN) + "\n... [900 bytes truncated] ...\n+password s3\n", [],
                 id="orphan-lines-after-truncation"),
    pytest.param(f"commit {'a' * 40}\n\n    msg\n\n" + section("hosts", PLAIN, SECRET, "+password s3\n")
                 + f"commit {'b' * 40}\n\n    later\n", ["hosts"], id="log-with-commits"),
]


@pytest.mark.parametrize("text, hidden", CASES)
def test_no_leak_diff_sections_hidden(text: str, hidden: list[str]) -> None:
    out, names = hide_secret_diffs(text, kinds)
    assert "password s3" not in out
    assert names == hidden
    assert "[deepseek-ls:" in out


def test_diff_sections_of_ordinary_files_and_commit_headers_are_kept() -> None:
    text = (f"commit {'a' * 40}\n\n    first\n\n" + section("hosts", PLAIN, SECRET, "+password s3\n")
            + f"commit {'b' * 40}\n\n    second\n\n" + section("a.py", PLAIN, PLAIN, "+x = 1\n"))
    out, names = hide_secret_diffs(text, kinds)
    assert names == ["hosts"] and "password s3" not in out
    assert "    second\n" in out and "+x = 1\n" in out and "    first\n" in out


def test_text_without_a_patch_is_untouched_even_when_truncated() -> None:
    text = "a1b2c3d one\n... [5000 bytes truncated] ...\nf00f00d two\n"
    assert hide_secret_diffs(text, kinds) == (text, [])
