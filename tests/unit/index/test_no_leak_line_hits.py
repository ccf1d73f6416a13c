"""Line hits go to the model: they are read from the workspace when a query's results
are shown, after the file was indexed. What stands on the path then may be a link
to a secret outside the workspace, a hard link, or a credential file: none of it may
be read out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CANARY = "canary_7f3e2a91"
NETRC = f"machine deploy.example.com login ci password {CANARY}\n"


def _indexed(make_index, tmp_path: Path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.py").write_text("deploy_marker = 1\n")
    (root / "other.py").write_text("x = 1\n")
    index = make_index(root)
    index.build()
    return root, index


def _swap_for_symlink(root: Path, outside: Path) -> None:
    (root / "notes.py").unlink()
    (root / "notes.py").symlink_to(outside)


def _swap_for_hard_link(root: Path, outside: Path) -> None:
    (root / "notes.py").unlink()
    os.link(outside, root / "notes.py")


@pytest.mark.parametrize(
    "swap",
    [
        pytest.param(_swap_for_symlink, id="symlink-out-of-the-workspace"),
        pytest.param(_swap_for_hard_link, id="hard-link-to-a-file-outside"),
    ],
)
def test_no_leak_line_hits_never_read_through_a_link_put_there_after_indexing(make_index, tmp_path, swap):
    root, index = _indexed(make_index, tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text(f"deploy_marker = '{CANARY}'\n")
    swap(root, outside)
    result = index.query("deploy_marker")
    assert [h.path for h in result.hits] == ["notes.py"]  # still in the (stale) index
    assert result.hits[0].lines == []
    assert CANARY not in str(result.model_dump())


def test_no_leak_line_hits_never_read_through_a_directory_link(make_index, tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "notes.py").write_text("deploy_marker = 1\n")
    index = make_index(root)
    index.build()
    outside = tmp_path / "outside_dir"
    outside.mkdir()
    (outside / "notes.py").write_text(f"deploy_marker = '{CANARY}'\n")
    (root / "pkg" / "notes.py").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").symlink_to(outside, target_is_directory=True)
    result = index.query("deploy_marker")
    assert [h.path for h in result.hits] == ["pkg/notes.py"]
    assert result.hits[0].lines == [] and CANARY not in str(result.model_dump())


def test_no_leak_line_hits_of_a_file_that_became_a_credential_file(make_index, tmp_path):
    root, index = _indexed(make_index, tmp_path)
    (root / "notes.py").write_text("deploy_marker\n" + NETRC)
    result = index.query("deploy_marker")
    assert [h.path for h in result.hits] == ["notes.py"] and result.hits[0].lines == []
    assert CANARY not in str(result.model_dump())


def test_line_hits_still_read_an_ordinary_changed_file(make_index, tmp_path):
    # The guard is not "no lines after a change": an edit that is not a secret still shows.
    root, index = _indexed(make_index, tmp_path)
    (root / "notes.py").write_text("# moved\ndeploy_marker = 2\n")
    assert [(h.line, h.text) for h in index.query("deploy_marker").hits[0].lines] == [(2, "deploy_marker = 2")]


def test_no_leak_the_build_does_not_index_a_hard_linked_file(make_index, tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text(f"deploy_marker = '{CANARY}'\n")
    os.link(outside, root / "notes.py")
    index = make_index(root)
    report = index.build()
    assert index.query(CANARY).hits == []
    assert [(s.path, s.reason) for s in report.skipped] == [("notes.py", "unreadable")]
    assert "hard links" in (report.skipped[0].detail or "")


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../secret.txt", id="parent"),
        pytest.param("ws/../../secret.txt", id="inner-parent"),
        pytest.param("/secret.txt", id="absolute"),
        pytest.param("./../secret.txt", id="dot-then-parent"),
    ],
)
def test_no_leak_a_path_no_walk_makes_is_never_read(tmp_path, path):
    # Paths come from the index; one that climbs out can only come from an index
    # directory the repository shipped (`.deepseek/index` committed with crafted documents).
    from deepseek_ls.index.query import file_bytes

    (tmp_path / "secret.txt").write_text(f"token = '{CANARY}'\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.py").write_text("x = 1\n")
    assert file_bytes(root, "ok.py") == b"x = 1\n"
    assert file_bytes(root, path) == b""
