"""A session of ours is ours in the workspace it was sealed in, not in another one a copy of it
lands in (`seal.workspace_id`). Sessions sealed by the previous version (first line only, no
workspace) stay the person's in their own workspace: migrated on first open, not hidden."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from deepseek_ls.store.log import SessionNotFound
from deepseek_ls.store.sessions import SessionStore
from sealing_helpers import listed, log_of, reason, sealed_session, v1_session


def _copied_into_the_other_workspace(a: Path, b: Path) -> str:
    sid = sealed_session(a)
    shutil.copytree(a / ".deepseek" / "sessions" / sid, b / ".deepseek" / "sessions" / sid)
    return sid


def _state_dir_symlinked_to_the_other(a: Path, b: Path) -> str:
    # A prepared repository ships `.deepseek` as a link to where the person's other project keeps its state.
    sid = sealed_session(a)
    shutil.rmtree(b / ".deepseek", ignore_errors=True)
    (b / ".deepseek").symlink_to(a / ".deepseek")
    return sid


def _session_dir_symlinked(a: Path, b: Path) -> str:
    sid = sealed_session(a)
    (b / ".deepseek" / "sessions").mkdir(parents=True, exist_ok=True)
    (b / ".deepseek" / "sessions" / sid).symlink_to(a / ".deepseek" / "sessions" / sid)
    return sid


def _v1_copied_into_the_other_workspace(a: Path, b: Path) -> str:
    sid = v1_session(a)
    shutil.copytree(a / ".deepseek" / "sessions" / sid, b / ".deepseek" / "sessions" / sid)
    return sid


def _project_moved(a: Path, b: Path) -> str:
    # Not an attack: the person renamed their project. Ignored, and the reason says to adopt.
    sid = sealed_session(a)
    shutil.rmtree(b)
    a.rename(b)
    return sid


ELSEWHERE = [
    pytest.param(_copied_into_the_other_workspace, id="sealed-session-copied-into-another-workspace"),
    pytest.param(_state_dir_symlinked_to_the_other, id="state-dir-symlinked-to-another-workspace"),
    pytest.param(_session_dir_symlinked, id="session-dir-symlinked-to-another-workspace"),
    pytest.param(_v1_copied_into_the_other_workspace, id="v1-sealed-session-copied-into-another-workspace"),
    pytest.param(_project_moved, id="project-moved"),
]


@pytest.mark.parametrize("plant", ELSEWHERE)
def test_never_trust_a_session_sealed_in_another_workspace(plant, tmp_path, user_config_home):
    a, b = tmp_path / "project-a", tmp_path / "project-b"
    a.mkdir()
    (b / ".deepseek").mkdir(parents=True)
    sid = plant(a, b)
    assert listed(b) == []
    why = reason(b, sid)
    assert "another workspace" in why and "moved or renamed" in why
    with pytest.raises(SessionNotFound, match=f"deepseek-ls sessions --adopt {sid}"):
        SessionStore(b / ".deepseek").open(sid)


def test_a_v1_sealed_session_stays_ours_in_its_workspace_and_is_migrated(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid = v1_session(root)
    assert listed(root) == [sid]
    marker = json.loads((log_of(root, sid).parent / "session.seal").read_text())
    assert marker["version"] == 2 and marker["migrated_from"] == 1
    assert marker["covered_bytes"] == log_of(root, sid).stat().st_size
    with SessionStore(root / ".deepseek", durable=False).open(sid) as log:  # resumed: appends chain on
        log.append("TurnAdded@v1", {"role": "user", "content": "resumed"})
    assert listed(root) == [sid]


def test_a_v1_sealed_session_of_a_lane_inside_the_workspace_stays_ours(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid = v1_session(root, recorded_root=root / ".deepseek" / "lanes" / "l1")
    assert listed(root) == [sid]


def test_a_v1_session_altered_before_migration_is_caught_on_its_first_line_only(tmp_path, user_config_home):
    root = tmp_path / "ws"
    sid = v1_session(root)
    path = log_of(root, sid)
    path.write_bytes(path.read_bytes().replace(b'"mode":"agent"', b'"mode":"yolo!"', 1))
    assert listed(root) == [] and "first event differs" in reason(root, sid)
