"""A checkpoint or staged patch of ours is ours in the workspace it was sealed in only: copied
into another workspace (a repository prepared with it, project A's checkpoint offered in
project B) it is never undone or offered there. Ones sealed before seals named their workspace
are the person's own: they keep working where they are and are bound to it on first read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.patch.checkpoint import CheckpointStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.store import seal

A_TEXT = 'print("project a")\n'
B_TEXT = 'print("project b: the person\'s work")\n'
DIFF = '--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print("project a")\n+print("project a, changed")\n'


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(tmp_path / "me" / "config.toml"))
    a, b = tmp_path / "project-a", tmp_path / "project-b"
    for root, text in ((a, A_TEXT), (b, B_TEXT)):
        root.mkdir()
        (root / "app.py").write_text(text)
    return a, b


def _checkpoint(root: Path) -> str:
    store = CheckpointStore(root, root / ".deepseek")
    cid = store.create(["app.py"], label="apply")
    store.record_after(cid, ["app.py"])
    return cid


def _copy_dir(a: Path, b: Path, sub: str) -> None:
    shutil.copytree(a / ".deepseek" / sub, b / ".deepseek" / sub, dirs_exist_ok=True)


def _link_state_dir(a: Path, b: Path, sub: str) -> None:
    shutil.rmtree(b / ".deepseek", ignore_errors=True)
    (b / ".deepseek").symlink_to(a / ".deepseek")


def _strip_workspace(path: Path) -> None:
    """The record as the previous version sealed it: no workspace named."""
    record = json.loads(path.read_text())
    record.pop("workspace")
    path.write_text(json.dumps(seal.sealed(record)))


def _copy_legacy(a: Path, b: Path, sub: str) -> None:
    _copy_dir(a, b, sub)
    for path in (b / ".deepseek" / sub).rglob("*.json"):
        _strip_workspace(path)
    # Seen first in its own workspace: bound there, then copied.
    for path in (a / ".deepseek" / sub).rglob("*.json"):
        _strip_workspace(path)
    if sub == "checkpoints":
        assert CheckpointStore(a, a / ".deepseek").list() != []
    else:
        assert PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).list() != []
    shutil.rmtree(b / ".deepseek" / sub)
    _copy_dir(a, b, sub)


MOVES = [
    pytest.param(_copy_dir, id="copied-into-another-workspace"),
    pytest.param(_link_state_dir, id="state-dir-symlinked-to-another-workspace"),
    pytest.param(_copy_legacy, id="legacy-sealed-bound-at-home-then-copied"),
]


@pytest.mark.parametrize("move", MOVES)
def test_never_clobber_with_a_checkpoint_of_another_workspace(move, projects):
    a, b = projects
    cid = _checkpoint(a)
    (b / ".deepseek").mkdir(exist_ok=True)
    move(a, b, "checkpoints")
    other = CheckpointStore(b, b / ".deepseek")
    assert other.list() == [] and other.latest_unrestored() is None
    assert other.restore_latest() is None
    with pytest.raises(LookupError):
        other.plan_undo([cid], lambda rel: B_TEXT)
    assert (b / "app.py").read_text() == B_TEXT
    assert CheckpointStore(a, a / ".deepseek").latest_unrestored() == cid  # still ours at home


@pytest.mark.parametrize("move", MOVES)
def test_never_clobber_with_a_patch_staged_in_another_workspace(move, projects):
    a, b = projects
    patch = PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).stage(DIFF)
    (b / ".deepseek").mkdir(exist_ok=True)
    move(a, b, "patches")
    other = PatchStore(b, b / ".deepseek", policy=PathPolicy(b))
    assert other.list() == []
    [ignored] = other.ignored()
    assert ignored.patch_id == patch.patch_id and "another workspace" in ignored.reason
    assert [p.patch_id for p in PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).list()] == [patch.patch_id]


def test_a_checkpoint_sealed_before_workspaces_still_undoes_and_is_bound(projects):
    a, _ = projects
    cid = _checkpoint(a)
    manifest = a / ".deepseek" / "checkpoints" / cid / "manifest.json"
    _strip_workspace(manifest)
    store = CheckpointStore(a, a / ".deepseek")
    assert store.latest_unrestored() == cid
    assert json.loads(manifest.read_text())["workspace"] == seal.workspace_id(a)
    (a / "app.py").write_text(A_TEXT + "x = 1\n")
    store.record_after(cid, ["app.py"])
    assert store.restore_latest() is not None and (a / "app.py").read_text() == A_TEXT


def test_a_patch_sealed_before_workspaces_is_still_offered_and_is_bound(projects):
    a, _ = projects
    store = PatchStore(a, a / ".deepseek", policy=PathPolicy(a))
    patch = store.stage(DIFF)
    path = a / ".deepseek" / "patches" / f"{patch.patch_id}.json"
    _strip_workspace(path)
    again = PatchStore(a, a / ".deepseek", policy=PathPolicy(a))
    assert [p.patch_id for p in again.list()] == [patch.patch_id]
    assert json.loads(path.read_text())["workspace"] == seal.workspace_id(a)


def test_never_clobber_a_hunk_settled_while_a_legacy_patch_was_being_bound(projects, monkeypatch):
    """Binding a legacy patch to its workspace saves it again: when another process (here another
    store) rejected its hunk between the read and that save, the stale copy must not be written
    back (the hunk would be pending again, and could be applied after the person rejected it)."""
    a, _ = projects
    patch = PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).stage(DIFF)
    _strip_workspace(a / ".deepseek" / "patches" / f"{patch.patch_id}.json")
    other = PatchStore(a, a / ".deepseek", policy=PathPolicy(a))
    real = seal.is_legacy

    def meanwhile(record):
        monkeypatch.setattr(seal, "is_legacy", real)
        other.reject(patch.patch_id, reason="the person said no elsewhere")
        return real(record)

    monkeypatch.setattr(seal, "is_legacy", meanwhile)
    PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).get(patch.patch_id)
    after = PatchStore(a, a / ".deepseek", policy=PathPolicy(a)).get(patch.patch_id)
    assert [h.status for h in after.hunks] == ["rejected"]


def test_never_clobber_a_checkpoint_restored_while_it_was_being_bound(projects, monkeypatch):
    """The same for a legacy checkpoint another process undid between the read and the binding
    save: written back, it would be unrestored again, and a second undo would clobber the file."""
    a, _ = projects
    cid = _checkpoint(a)
    _strip_workspace(a / ".deepseek" / "checkpoints" / cid / "manifest.json")
    other = CheckpointStore(a, a / ".deepseek")
    real = seal.is_legacy

    def meanwhile(record):
        monkeypatch.setattr(seal, "is_legacy", real)
        other.mark_restored([cid])
        return real(record)

    monkeypatch.setattr(seal, "is_legacy", meanwhile)
    CheckpointStore(a, a / ".deepseek").list()
    assert CheckpointStore(a, a / ".deepseek").latest_unrestored() is None
