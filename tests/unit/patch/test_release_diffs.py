"""Real release-to-release diffs (attrs 22.2.0→23.1.0, requests 2.31.0→2.32.0: renames, moves,
created and deleted files) apply byte for byte, remove the directories they empty as `git apply`
does, and undo back to the old release exactly. Fixtures: tests/fixtures/release_diffs/make_fixtures.sh."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy.paths import PathPolicy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "release_diffs"
PAIRS = [pytest.param("attrs", "22.2.0", "23.1.0", id="attrs-22.2.0-23.1.0"),
         pytest.param("requests", "2.31.0", "2.32.0", id="requests-2.31.0-2.32.0")]


def extract(sdist: Path, dest: Path) -> None:
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
            if member.name and not member.name.endswith(".png"):
                tar.extract(member, dest, filter="data")


def tree(root: Path) -> dict[str, bytes]:
    return {f.relative_to(root).as_posix(): f.read_bytes() for f in sorted(root.rglob("*"))
            if f.is_file() and ".deepseek" not in f.relative_to(root).parts}


def dirs(root: Path) -> set[str]:
    return {d.relative_to(root).as_posix() for d in root.rglob("*") if d.is_dir() and ".deepseek" not in d.parts}


def expected_hashes(name: str, new: str) -> dict[str, str]:
    lines = (FIXTURES / f"{name}-{new}.sha256").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


@pytest.mark.parametrize("name, old, new", PAIRS)
def test_release_diff_applies_byte_exactly_and_undoes(tmp_path: Path, name: str, old: str, new: str) -> None:
    ws = tmp_path / "ws"
    extract(FIXTURES / f"{name}-{old}.tar.gz", ws)
    before, before_dirs = tree(ws), dirs(ws)
    diff = gzip.decompress((FIXTURES / f"{name}-{old}-{new}.diff.gz").read_bytes()).decode()
    store = PatchStore(ws, ws / ".deepseek", policy=PathPolicy(ws, []))
    result = store.apply(store.stage(diff).patch_id)
    assert result.ok, result.message
    after = tree(ws)
    assert {p: hashlib.sha256(b).hexdigest() for p, b in after.items()} == expected_hashes(name, new)

    # git apply on the same base gives the same tree, and the same directories (emptied ones removed).
    reference = tmp_path / "git"
    extract(FIXTURES / f"{name}-{old}.tar.gz", reference)
    (tmp_path / "release.diff").write_text(diff)
    subprocess.run(["git", "apply", str(tmp_path / "release.diff")], cwd=reference, check=True)
    assert tree(reference) == after
    assert dirs(reference) == dirs(ws)
    assert not [d for d in ws.rglob("*") if d.is_dir() and not any(d.iterdir())]

    assert sorted(store.undo()) and tree(ws) == before and dirs(ws) == before_dirs
    shutil.rmtree(reference)
