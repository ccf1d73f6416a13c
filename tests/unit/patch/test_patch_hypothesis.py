"""Generated edits: whatever the edit, staging and applying its diff reproduces the edited file."""

from __future__ import annotations

import difflib
import re
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from patch_helpers import make_store

WORDS = st.sampled_from(["alpha", "beta", "", "    indent", "return x", "}", "# note", "x = 1"])


def unified(old: str, new: str, path: str = "f.txt", n: int = 3) -> str:
    """A unified diff like git's, including "\\ No newline at end of file" markers."""
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    for line in list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=n))[2:]:
        out.append(line)
        if not line.endswith("\n"):
            out[-1] = line + "\n"
            out.append("\\ No newline at end of file\n")
    return "".join(out)


@st.composite
def edited_text(draw, unique: bool = False):
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    if unique:
        count = draw(st.integers(1, 60))
        lines = [f"line {i} {draw(WORDS)}" for i in range(count)]
    else:
        lines = draw(st.lists(WORDS, min_size=0, max_size=40))
    old = eol.join(lines) + (eol if lines and draw(st.booleans()) else "")
    new_lines = list(lines)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        i = draw(st.integers(0, max(len(new_lines), 1)))
        text = f"edit {draw(st.integers(0, 999))} {draw(WORDS)}"
        if op == "insert":
            new_lines.insert(i, text)
        elif new_lines and i < len(new_lines):
            if op == "delete":
                del new_lines[i]
            else:
                new_lines[i] = text
    new = eol.join(new_lines) + (eol if new_lines and draw(st.booleans()) else "")
    return old, new


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(edited_text())
def test_any_edit_round_trips(texts: tuple[str, str]) -> None:
    old, new = texts
    if old == new:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(old.encode())
        store = make_store(root)
        ps = store.stage(unified(old, new))
        assert store.apply(ps.patch_id).ok
        assert (root / "f.txt").read_bytes() == new.encode()


@SETTINGS
@given(edited_text(unique=True), st.integers(-25, 25))
def test_wrong_line_numbers_still_round_trip(texts: tuple[str, str], shift: int) -> None:
    old, new = texts
    if old == new:
        return

    def skew(m: re.Match[str]) -> str:
        a, b = max(int(m.group(1)) + shift, 0), max(int(m.group(3)) + shift, 0)
        return f"@@ -{a}{m.group(2) or ''} +{b}{m.group(4) or ''} @@"

    diff = re.sub(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", skew, unified(old, new), flags=re.M)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(old.encode())
        store = make_store(root)
        ps = store.stage(diff)
        assert store.apply(ps.patch_id).ok
        assert (root / "f.txt").read_bytes() == new.encode()


@SETTINGS
@given(edited_text())
def test_hunk_subsets_agree_with_git_apply(texts: tuple[str, str]) -> None:
    """Applying only the first hunk gives what `git apply` gives for that hunk alone."""
    old, new = texts
    if old == new:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(old.encode())
        store = make_store(root)
        diff = unified(old, new, n=1)
        ps = store.stage(diff)
        first = ps.hunks[0]
        merged = store.merge_hunks(ps.patch_id, [first.hunk_id], "f.txt", old)
        header, *hunks = re.split(r"(?m)^(?=@@ )", diff)
        (root / "one.patch").write_text(header + hunks[0])
        subprocess.run(["git", "apply", "--unidiff-zero", "one.patch"], cwd=root, check=True, capture_output=True)
        assert merged.ok and merged.text.encode() == (root / "f.txt").read_bytes()


@SETTINGS
@given(st.integers(20, 80), st.data())
def test_non_overlapping_user_edits_merge_with_the_patch(n: int, data) -> None:
    """The user edits one region, the patch another (apart by more than the context): both survive."""
    base_lines = [f"line {i}\n" for i in range(n)]
    patch_at = data.draw(st.integers(0, n - 1), label="patch_at")
    far = [i for i in range(n) if abs(i - patch_at) > 4]
    if not far:
        return
    user_at = data.draw(st.sampled_from(far), label="user_at")
    patched = list(base_lines)
    patched[patch_at] = "patched\n"
    typed = list(base_lines)
    typed[user_at] = "typed by the user\n"
    both = list(patched)
    both[user_at] = "typed by the user\n"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_text("".join(base_lines))
        store = make_store(root)
        ps = store.stage(unified("".join(base_lines), "".join(patched)))
        merged = store.merge_hunks(ps.patch_id, [h.hunk_id for h in ps.hunks], "f.txt", "".join(typed))
        assert merged.ok and merged.merged
        assert merged.text == "".join(both)


DIFFISH = st.sampled_from(
    ["--- a/f.txt\n", "+++ b/f.txt\n", "@@ -1,2 +1,2 @@\n", "@@ -0,0 +1 @@\n", " alpha\n", "-alpha\n", "+beta\n",
     "\\ No newline at end of file\n", "diff --git a/f.txt b/f.txt\n", "--- /dev/null\n", "+++ /dev/null\n",
     "rename from f.txt\n", "rename to g.txt\n", "Binary files differ\n", "\n", "@@ @@\n", "+++ b/../x\n"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(DIFFISH, st.text(max_size=20)), max_size=25))
def test_malformed_diffs_get_a_patch_error_and_change_nothing(pieces: list[str]) -> None:
    from deepseek_ls.patch import PatchError

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_text("alpha\nbeta\n")
        store = make_store(root)
        try:
            store.stage("".join(pieces))
        except PatchError as exc:
            assert str(exc)
        assert (root / "f.txt").read_text() == "alpha\nbeta\n"
        assert sorted(p.name for p in root.iterdir()) == [".deepseek", "f.txt"]
