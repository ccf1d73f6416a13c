"""`deepseek-ls apply` / `deepseek-ls diff` driven as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TWO_FILES = (
    "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,3 @@\n alpha\n+inserted\n beta\n"
)


def run(workspace: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK_")}
    return subprocess.run(
        [sys.executable, "-m", "deepseek_ls", "--workspace", str(workspace), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=workspace,
        start_new_session=True,  # no controlling terminal: the CLI cannot prompt
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("alpha\nbeta\n")
    (root / "change.diff").write_text(TWO_FILES)
    return root


def test_apply_diff_file_with_yes(workspace: Path) -> None:
    proc = run(workspace, "apply", "--diff", "change.diff", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert "applied 2 hunk(s) to 2 file(s)" in proc.stdout
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\ninserted\nbeta\n"


def test_apply_diff_from_stdin(workspace: Path) -> None:
    proc = run(workspace, "apply", "--diff", "-", "--yes", stdin=TWO_FILES)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_check_validates_and_changes_nothing(workspace: Path) -> None:
    proc = run(workspace, "apply", "--diff", "change.diff", "--check")
    assert proc.returncode == 0 and "check passed" in proc.stdout
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert json.loads(run(workspace, "diff", "--json").stdout) == {"patches": [], "ignored": []}


def test_one_failing_file_means_exit_1_and_no_file_changed(workspace: Path) -> None:
    bad = TWO_FILES.replace(" alpha\n+inserted\n beta\n", " gamma\n+inserted\n delta\n")
    proc = run(workspace, "apply", "--diff", "-", "--yes", stdin=bad)
    assert proc.returncode == 1
    assert "b.txt" in proc.stderr and "nearest candidate" in proc.stderr and "nothing was changed" in proc.stderr
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\nbeta\n"


def test_conflict_at_apply_time_changes_nothing(workspace: Path) -> None:
    staged = run(workspace, "apply", "--diff", "change.diff")  # no terminal: staged, not applied
    assert staged.returncode == 1 and "pass --yes" in staged.stderr
    patch_id = json.loads(run(workspace, "diff", "--json").stdout)["patches"][0]["patch_id"]
    (workspace / "a.txt").write_text("one\ntwo, edited by hand\nthree\n")
    proc = run(workspace, "apply", patch_id, "--yes")
    assert proc.returncode == 1 and "overlap" in proc.stderr
    assert (workspace / "a.txt").read_text() == "one\ntwo, edited by hand\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\nbeta\n"


def test_diff_lists_hunk_ids_and_apply_takes_one_hunk(workspace: Path) -> None:
    run(workspace, "apply", "--diff", "change.diff")
    listing = json.loads(run(workspace, "diff", "--json").stdout)["patches"][0]
    hunks = {h["file"]: h["hunk_id"] for h in listing["hunks"]}
    assert set(hunks) == {"a.txt", "b.txt"}
    assert "base_text" not in json.dumps(listing)
    proc = run(workspace, "apply", listing["patch_id"], "--hunk", hunks["b.txt"], "--yes")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\ninserted\nbeta\n"
    human = run(workspace, "diff", listing["patch_id"]).stdout
    assert f"{hunks['b.txt']}  [accepted]" in human and f"{hunks['a.txt']}  [pending]" in human


def test_undo_restores_the_last_apply(workspace: Path) -> None:
    assert run(workspace, "apply", "--diff", "change.diff", "--yes").returncode == 0
    proc = run(workspace, "apply", "--undo")
    assert proc.returncode == 0 and "a.txt" in proc.stdout and "b.txt" in proc.stdout
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\nbeta\n"
    again = run(workspace, "apply", "--undo")
    assert again.returncode == 1 and "nothing to undo" in again.stderr


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        pytest.param("--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", "reserved", id="git-dir"),
        pytest.param("--- a/../outside.txt\n+++ b/../outside.txt\n@@ -1 +1 @@\n-a\n+b\n", "'..'", id="escape"),
        pytest.param("not a diff at all\n", "no file changes", id="prose"),
    ],
)
def test_bad_diffs_exit_non_zero_with_a_reason(workspace: Path, diff: str, message: str) -> None:
    before = {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()}
    proc = run(workspace, "apply", "--diff", "-", "--yes", stdin=diff)
    assert proc.returncode == 1 and message in proc.stderr
    assert {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()} == before


def test_apply_needs_a_patch_or_a_diff(workspace: Path) -> None:
    proc = run(workspace, "apply")
    assert proc.returncode == 2 and "PATCH_ID or --diff" in proc.stderr


def test_apply_one_file_of_a_staged_patch(workspace: Path) -> None:
    run(workspace, "apply", "--diff", "change.diff")
    patch_id = json.loads(run(workspace, "diff", "--json").stdout)["patches"][0]["patch_id"]
    proc = run(workspace, "apply", patch_id, "--file", "a.txt", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["ok"] and [f["file"] for f in result["files"]] == ["a.txt"]
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\nbeta\n"
    unknown = run(workspace, "apply", patch_id, "--file", "c.txt", "--yes")
    assert unknown.returncode == 1 and "does not change ['c.txt']" in unknown.stderr


@pytest.mark.parametrize(("answer", "applied"), [("y", True), ("n", False)], ids=["yes", "no"])
def test_on_a_terminal_apply_asks_first(workspace: Path, answer: str, applied: bool) -> None:
    import pty

    primary, secondary = pty.openpty()
    try:
        os.write(primary, f"{answer}\n".encode())
        proc = subprocess.run(
            [sys.executable, "-m", "deepseek_ls", "--workspace", str(workspace), "apply", "--diff", "change.diff"],
            stdin=secondary, capture_output=True, text=True, cwd=workspace, timeout=60,
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert "Apply 2 hunk(s) to a.txt, b.txt? [y/N]" in proc.stderr
    assert (proc.returncode == 0) is applied
    assert ((workspace / "a.txt").read_text() == "one\nTWO\nthree\n") is applied


def test_never_clobber_an_edit_made_after_the_apply_undo_merges_it(workspace: Path) -> None:
    assert run(workspace, "apply", "--diff", "change.diff", "--yes").returncode == 0
    with (workspace / "a.txt").open("a") as f:
        f.write("four, typed by hand\n")
    proc = run(workspace, "apply", "--undo")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\nfour, typed by hand\n"  # undone, the line kept
    assert (workspace / "b.txt").read_text() == "alpha\nbeta\n"


def test_never_clobber_an_overlapping_edit_undo_is_refused_naming_the_file(workspace: Path) -> None:
    assert run(workspace, "apply", "--diff", "change.diff", "--yes").returncode == 0
    (workspace / "a.txt").write_text("one\nTWO, edited again by hand\nthree\n")
    proc = run(workspace, "apply", "--undo")
    assert proc.returncode == 1
    assert "undo refused" in proc.stderr and "a.txt" in proc.stderr and "Traceback" not in proc.stderr
    assert (workspace / "a.txt").read_text() == "one\nTWO, edited again by hand\nthree\n"
    assert (workspace / "b.txt").read_text() == "alpha\ninserted\nbeta\n"  # nothing restored at all


def test_never_clobber_a_file_deleted_after_the_apply(workspace: Path) -> None:
    assert run(workspace, "apply", "--diff", "change.diff", "--yes").returncode == 0
    (workspace / "b.txt").unlink()
    proc = run(workspace, "apply", "--undo")
    assert proc.returncode == 1 and "b.txt: it was deleted after the apply" in proc.stderr
    assert not (workspace / "b.txt").exists() and (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"


def test_deleting_the_last_file_of_a_directory_removes_it_and_undo_brings_both_back(workspace: Path) -> None:
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "pkg" / "sub" / "only.py").write_text("x = 1\n")
    (workspace / "gone.diff").write_text("--- a/pkg/sub/only.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n")
    proc = run(workspace, "apply", "--diff", "gone.diff", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / "pkg").exists()  # pkg/sub and pkg were left empty: removed, as git apply does
    assert run(workspace, "apply", "--undo").returncode == 0
    assert (workspace / "pkg" / "sub" / "only.py").read_text() == "x = 1\n"


def _session_patch(workspace: Path) -> tuple[str, str]:
    """A patch a session of the person's proposed, staged as the server stages it."""
    from deepseek_ls.patch import PatchStore
    from deepseek_ls.policy.paths import PathPolicy
    from deepseek_ls.store.sessions import SessionStore

    state = workspace / ".deepseek"
    with SessionStore(state).create(workspace, "agent", "change two files") as log:
        session_id = log.session_id
    store = PatchStore(workspace, state, policy=PathPolicy(workspace, []))
    return session_id, store.stage(TWO_FILES, session_id=session_id).patch_id


def _session_events(workspace: Path, session_id: str) -> list[dict]:
    log = workspace / ".deepseek" / "sessions" / session_id / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_an_apply_from_the_cli_is_in_the_history_of_the_session_that_proposed_it(workspace: Path) -> None:
    session_id, patch_id = _session_patch(workspace)
    proc = run(workspace, "apply", patch_id, "--yes")
    assert proc.returncode == 0, proc.stderr
    applied = [e for e in _session_events(workspace, session_id) if e["kind"] == "PatchApplied@v1"]
    assert [(e["payload"]["patch_id"], e["payload"]["via"], sorted(e["payload"]["files"])) for e in applied] == [
        (patch_id, "disk", ["a.txt", "b.txt"])]
    sessions = run(workspace, "sessions", "--json")
    assert sessions.returncode == 0, sessions.stderr
    assert session_id in sessions.stdout  # still the person's own session after the CLI appended to it


def test_an_apply_whose_session_is_gone_still_applies_and_says_it_is_not_recorded(workspace: Path) -> None:
    import shutil

    session_id, patch_id = _session_patch(workspace)
    shutil.rmtree(workspace / ".deepseek" / "sessions" / session_id)
    proc = run(workspace, "apply", patch_id, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert f"not recorded in session {session_id}" in proc.stderr
    assert (workspace / "a.txt").read_text() == "one\nTWO\nthree\n"
