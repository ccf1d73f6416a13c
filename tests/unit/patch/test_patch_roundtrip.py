"""Round-trips against real history: applying `git diff A B` to A yields B byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.patch import SafetyGate

from patch_helpers import git, make_store

BIG_GATE = SafetyGate(max_diff_bytes=50_000_000, max_files_without_approval=10_000, max_loc_without_approval=10**7)
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
PROJECT = Path(__file__).resolve().parents[3]


def tree_files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".deepseek")]
        for name in filenames:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def rev_files(repo: Path, rev: str) -> dict[str, bytes]:
    names = [n for n in git(repo, "ls-tree", "-r", "-z", "--name-only", rev).split("\0") if n]
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=repo, check=True, capture_output=True).stdout
        for n in names
    }


def apply_history(repo: Path, a: str, b: str, tmp: Path, *diff_flags: str) -> None:
    """Check out `a` in a fresh clone, stage and apply `git diff a b`, compare with `b`."""
    diff = subprocess.run(
        ["git", "diff", "--no-color", "--no-ext-diff", *diff_flags, a, b],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode("utf-8")
    work = tmp / f"apply-{a[:8]}-{b[:8]}-{len(diff_flags)}"
    git(tmp, "clone", "-q", "--no-checkout", str(repo), str(work))
    git(work, "checkout", "-q", a)
    store = make_store(work, gate=BIG_GATE)
    if diff.strip():
        ps = store.stage(diff)
        result = store.apply(ps.patch_id)
        assert result.ok, result.message
    assert tree_files(work) == rev_files(repo, b)


@pytest.fixture(scope="module")
def edited_history(tmp_path_factory) -> tuple[Path, str, str]:
    """A real package source tree committed as A, then edited in every way a diff can express as B."""
    repo = tmp_path_factory.mktemp("history") / "repo"
    shutil.copytree(SITE / "pathspec", repo / "pathspec", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(SITE / "unidiff", repo / "unidiff", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\nfour\r\n")
    (repo / "no_eol.txt").write_bytes(b"alpha\nbeta")
    (repo / "gets_no_eol.txt").write_bytes(b"x\ny\n")
    (repo / "formfeed.py").write_bytes(b"a = 1\n\x0c\nb = 2\n")
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A")
    a = git(repo, "rev-parse", "HEAD").strip()

    py = sorted(p for p in (repo / "pathspec").rglob("*.py") if p.stat().st_size > 2000)
    for n, path in enumerate(py[:6]):
        lines = path.read_bytes().split(b"\n")
        lines.insert(3, b"# inserted near the top %d" % n)
        mid = len(lines) // 2
        lines[mid] = lines[mid] + b"  # changed in the middle"
        del lines[mid + 5 : mid + 7]
        lines.insert(len(lines) - 2, b"# inserted near the end")
        path.write_bytes(b"\n".join(lines))
    git(repo, "mv", "unidiff/errors.py", "unidiff/problems.py")  # pure rename
    constants = repo / "unidiff" / "constants.py"
    git(repo, "mv", "unidiff/constants.py", "unidiff/consts.py")  # rename with an edit
    consts = repo / "unidiff" / "consts.py"
    consts.write_bytes(consts.read_bytes().replace(b"RE_", b"RX_", 2))
    assert not constants.exists()
    git(repo, "rm", "-q", "unidiff/__version__.py")  # deletion
    (repo / "NEW_FILE.md").write_bytes(b"# A new file\n\nwith two paragraphs\n")
    (repo / "empty_new.txt").write_bytes(b"")
    (repo / "crlf.txt").write_bytes(b"one\r\nTWO\r\nthree\r\nfour\r\nfive\r\n")
    (repo / "no_eol.txt").write_bytes(b"alpha\nbeta\ngamma\n")
    (repo / "gets_no_eol.txt").write_bytes(b"x\ny")
    (repo / "formfeed.py").write_bytes(b"a = 1\n\x0c\nb = 3\n")
    lf = repo / "unidiff" / "__init__.py"
    lf.write_bytes(lf.read_bytes().replace(b"\n", b"\r\n"))  # whole-file conversion to CRLF
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "B")
    b = git(repo, "rev-parse", "HEAD").strip()
    return repo, a, b


def test_edited_package_tree_round_trips_with_rename_detection(edited_history, tmp_path: Path) -> None:
    repo, a, b = edited_history
    apply_history(repo, a, b, tmp_path, "-M")


def test_edited_package_tree_round_trips_without_rename_detection(edited_history, tmp_path: Path) -> None:
    repo, a, b = edited_history
    apply_history(repo, a, b, tmp_path, "--no-renames")


def test_edited_package_tree_round_trips_with_more_context(edited_history, tmp_path: Path) -> None:
    repo, a, b = edited_history
    apply_history(repo, a, b, tmp_path, "-U10")


def _project_commit_pairs(limit: int) -> list[tuple[str, str]]:
    if not (PROJECT / ".git").exists():
        return []
    revs = git(PROJECT, "rev-list", "--reverse", "--first-parent", "HEAD").split()
    pairs = []
    for a, b in zip(revs, revs[1:]):
        numstat = git(PROJECT, "diff", "--numstat", a, b)
        if any(line.startswith("-\t-\t") for line in numstat.splitlines()):
            continue  # binary changes are out of scope
        pairs.append((a, b))
        if len(pairs) == limit:
            break
    return pairs


@pytest.mark.parametrize("pair", _project_commit_pairs(8), ids=lambda p: f"{p[0][:7]}..{p[1][:7]}")
def test_this_projects_own_history_round_trips(pair: tuple[str, str], tmp_path: Path) -> None:
    a, b = pair
    apply_history(PROJECT, a, b, tmp_path)
