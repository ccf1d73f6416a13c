"""Undo in the editor never clobbers: undoing a Hetun mission (`deepseek.undoMission`) or the last
apply (`deepseek.undo`) lands through workspace/applyEdit on the buffers the person sees, 3-way, so
what they typed after the apply stays; an edit overlapping what is to be restored refuses the whole
undo with a message naming the file, and nothing changes; a checkpoint holds the buffer's unsaved
text, not the disk's. The real server, the fake DeepSeek on loopback, an editor with buffers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import ADD_FIX, APP, BufferEditor, file_uri, lenses, run
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from test_lsp_hetun import PLAN_ONE_STEP, script

from deepseek_ls.lsp import names

FIX_DIFF = ADD_FIX.strip("`\n").removeprefix("diff\n") + "\n"  # the executor's answer as a diff file
TYPED_GREET = APP.replace('"Hello " + name', '"Hi " + name')


def events(root: Path, sid: str, kind: str) -> list[dict]:
    lines = (root / ".deepseek" / "sessions" / sid / "events.jsonl").read_text().splitlines()
    return [json.loads(line)["payload"] for line in lines if f'"{kind}"' in line]


async def approved_mission(client, state, fake, root: Path, *, open_first: str | None = None):
    """A one-step mission (fix add in app.py), approved; its change is in the buffer, unsaved."""
    script(fake, PLAN_ONE_STEP)
    fake.add({"match": {"role": "executor"}, "content": ADD_FIX})
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "mode": "hetun"})
    editor = BufferEditor(client, state, root)
    if open_first is not None:
        editor.open("app.py", open_first)
    approved = await run(client, names.CMD_APPROVE_MISSION, {"session_id": planned["session_id"]})
    assert approved["state"] == "Paused" and approved["unsaved"] == ["app.py"], approved
    assert "a + b" in editor.text("app.py")
    return planned["session_id"], editor


async def test_never_clobber_undo_mission_keeps_what_was_typed_after_it(
        agent_editor, fake_deepseek, app_workspace: Path) -> None:
    """Mission applied → the person changes greet in the buffer (unsaved) → Undo mission: the buffer
    keeps their greet and loses the mission's fix; the disk is not written under the editor."""
    client, state = agent_editor
    sid, editor = await approved_mission(client, state, fake_deepseek, app_workspace)
    typed = editor.text("app.py").replace('"Hello " + name', '"Hi " + name')
    editor.type("app.py", typed)
    typed_version = editor.buffers[file_uri(app_workspace)][1]

    undone = await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert undone["restored"] == ["app.py"] and undone["kept"] == []
    assert editor.text("app.py") == TYPED_GREET  # their typing kept, the mission's change gone
    assert (app_workspace / "app.py").read_text() == APP  # never written under the editor
    assert len(state.applied_edits) == 2  # the mission's edit, then the undo's, both workspace/applyEdit
    undo_edit = state.applied_edits[-1].edit
    if undo_edit.document_changes is not None:  # versioned: made for the buffer with the typing
        assert undo_edit.document_changes[0].text_document.version == typed_version

    (mission_undone,) = events(app_workspace, sid, "MissionUndone@v1")
    assert mission_undone["files"] == ["app.py"] and mission_undone["via"] == "workspace/applyEdit"
    restored = events(app_workspace, sid, "CheckpointRestored@v1")
    assert [r["via"] for r in restored] == ["workspace/applyEdit"] and restored[0]["merged"] == ["app.py"]
    titles = [lens.command.title for lens in await lenses(client, file_uri(app_workspace, f".deepseek/missions/{sid}.md"))]
    assert "↶ Undo mission" not in titles
    with pytest.raises(JsonRpcException, match="already undone"):
        await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    replay = cli(app_workspace, "replay", sid, "--rerun", "--json")  # the undo is part of the recorded session
    assert replay.returncode == 0 and json.loads(replay.stdout)["ok"], replay.stdout + replay.stderr


async def test_never_clobber_undo_mission_refused_when_the_typing_overlaps_it(
        agent_editor, fake_deepseek, app_workspace: Path) -> None:
    """The person edited the very line the mission changed: the undo is refused with a message
    naming app.py, and nothing changes (buffer, disk, the mission still undoable)."""
    client, state = agent_editor
    sid, editor = await approved_mission(client, state, fake_deepseek, app_workspace)
    typed = editor.text("app.py").replace("return a + b", "return a * b  # mine")
    editor.type("app.py", typed)
    edits_before = len(state.applied_edits)

    with pytest.raises(JsonRpcException, match=r"undo refused, nothing was changed[\s\S]*app\.py"):
        await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert any(m.type == types.MessageType.Error and "undo refused" in m.message and "app.py" in m.message
               for m in client.messages)
    assert editor.text("app.py") == typed and len(state.applied_edits) == edits_before
    assert (app_workspace / "app.py").read_text() == APP
    assert events(app_workspace, sid, "MissionUndone@v1") == []
    assert events(app_workspace, sid, "CheckpointRestored@v1") == []
    checkpoints = app_workspace / ".deepseek" / "checkpoints"
    assert not any(json.loads((d / "manifest.json").read_text())["restored"] for d in checkpoints.iterdir())

    # Once the person takes their edit back, the same undo goes through.
    editor.type("app.py", typed.replace("return a * b  # mine", "return a + b"))
    undone = await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert undone["restored"] == ["app.py"] and editor.text("app.py") == APP


async def test_never_clobber_mission_checkpoint_holds_the_dirty_buffer(
        agent_editor, fake_deepseek, app_workspace: Path) -> None:
    """app.py had unsaved typing when the mission was approved: its checkpoint holds the buffer's
    text (not the disk's), and Undo mission gives back exactly that buffer."""
    client, state = agent_editor
    sid, editor = await approved_mission(client, state, fake_deepseek, app_workspace, open_first=TYPED_GREET)
    assert '"Hi " + name' in editor.text("app.py")
    (mark,) = events(app_workspace, sid, "MissionCheckpoint@v1")
    snapshot = app_workspace / ".deepseek" / "checkpoints" / mark["checkpoint_id"] / "files" / "app.py"
    assert snapshot.read_text() == TYPED_GREET  # the buffer, unsaved typing included; the disk says "Hello "

    undone = await run(client, names.CMD_UNDO_MISSION, {"session_id": sid})
    assert undone["restored"] == ["app.py"]
    assert editor.text("app.py") == TYPED_GREET and (app_workspace / "app.py").read_text() == APP


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    # The same user as the editor's server (conftest `server_env`): checkpoints are sealed with
    # the user's key, and another user's are not undone.
    env = {**os.environ, "DEEPSEEK_API_KEY": "test-key", "XDG_CONFIG_HOME": str(root.parent / "xdg-config")}
    return subprocess.run([sys.executable, "-m", "deepseek_ls", "--workspace", str(root), *args],
                          cwd=root, capture_output=True, text=True, timeout=120, env=env)


async def test_never_clobber_undo_last_apply_lands_in_the_buffer(editor, workspace: Path) -> None:
    """`deepseek.undo` of a disk apply (`deepseek-ls apply`): app.py is open and the person typed in
    it since, so the undo goes to the buffer (their typing kept); notes.txt is not open, so it is
    restored on the disk, which still holds what the apply wrote."""
    client, state = editor
    (workspace / "app.py").write_text(APP)
    (workspace / "notes.txt").write_text("one\n")
    (workspace / "fix.diff").write_text(FIX_DIFF + "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n one\n+two\n")
    buffers = BufferEditor(client, state, workspace)
    buffers.open("app.py")
    applied = cli(workspace, "apply", "--diff", "fix.diff", "--yes")
    assert applied.returncode == 0, applied.stderr
    buffers.type("app.py", (workspace / "app.py").read_text())  # the editor reloads the clean buffer
    typed = (workspace / "app.py").read_text().replace('"Hello " + name', '"Hi " + name')
    buffers.type("app.py", typed)

    undone = await run(client, names.CMD_UNDO, {})
    assert sorted(undone["restored"]) == ["app.py", "notes.txt"] and undone["unsaved"] == ["app.py"]
    assert buffers.text("app.py") == TYPED_GREET
    assert "a + b" in (workspace / "app.py").read_text()  # the buffer's to save; not written under it
    assert (workspace / "notes.txt").read_text() == "one\n"
    assert len(state.applied_edits) == 1


async def test_never_clobber_undo_last_apply_refused_when_the_buffer_overlaps(editor, workspace: Path) -> None:
    client, state = editor
    (workspace / "app.py").write_text(APP)
    (workspace / "fix.diff").write_text(FIX_DIFF)
    buffers = BufferEditor(client, state, workspace)
    buffers.open("app.py")
    assert cli(workspace, "apply", "--diff", "fix.diff", "--yes").returncode == 0
    typed = (workspace / "app.py").read_text().replace("return a + b", "return b + a")
    buffers.type("app.py", typed)

    with pytest.raises(JsonRpcException, match=r"undo refused[\s\S]*app\.py"):
        await run(client, names.CMD_UNDO, {})
    assert buffers.text("app.py") == typed and state.applied_edits == []
    assert "a + b" in (workspace / "app.py").read_text()


async def test_never_clobber_undo_the_editor_refuses_changes_nothing(editor, workspace: Path) -> None:
    """The editor answers applied=false to the undo's edit: the file already restored on disk is
    put back, the checkpoint stays to undo, and the person is told."""
    client, state = editor
    (workspace / "app.py").write_text(APP)
    (workspace / "notes.txt").write_text("one\n")
    (workspace / "fix.diff").write_text(FIX_DIFF + "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n one\n+two\n")
    buffers = BufferEditor(client, state, workspace)
    buffers.open("app.py")
    assert cli(workspace, "apply", "--diff", "fix.diff", "--yes").returncode == 0
    buffers.type("app.py", (workspace / "app.py").read_text())
    state.apply_result = False

    with pytest.raises(JsonRpcException, match="did not apply the edit of app.py"):
        await run(client, names.CMD_UNDO, {})
    assert "a + b" in buffers.text("app.py") and (workspace / "notes.txt").read_text() == "one\ntwo\n"
    assert not any(json.loads((d / "manifest.json").read_text())["restored"]
                   for d in (workspace / ".deepseek" / "checkpoints").iterdir())
    state.apply_result = True
    undone = await run(client, names.CMD_UNDO, {})
    assert buffers.text("app.py") == APP and (workspace / "notes.txt").read_text() == "one\n", undone
