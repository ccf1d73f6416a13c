"""Never clobber on undo when the server's copy of a buffer is not the editor's.

`deepseek.undo` (and a mission's undo, the same code) computes its edit from the server's
copy of each buffer, as an accept does, so it goes through the same check: while a file
it would restore is out of sync (a change the server could not read or place, versions
going backwards, a change to a document never opened), the undo is refused, nothing is
sent or written, and the checkpoint stays for later; once the editor sends the buffer
again, the same undo goes through and keeps what the person typed. The real server
process over raw JSON-RPC with the editor of `test_hostile_editor_buffers.py`; the apply
to undo is made by the real CLI (`deepseek-ls apply`), on disk. One server for each client kind
serves the module, a file, patch and editor per test (`shared_world`): `deepseek.undo` takes the
newest checkpoint, the test's own (each test's undo goes through before it ends).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, TYPED_LINE, WITH_BOTH, World, insert_at, module_server, shared_world  # noqa: F401

from deepseek_ls.lsp import names

APPLIED = WITH_BOTH.removeprefix(TYPED_LINE)  # what `deepseek-ls apply` writes: both hunks, no typing


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    # The server's user (raw_client.server_env): checkpoints are sealed with the user's key.
    env = {**os.environ, "DEEPSEEK_API_KEY": "test-key", "XDG_CONFIG_HOME": str(root.parent / "xdg-config")}
    return subprocess.run([sys.executable, "-m", "deepseek_ls", "--workspace", str(root), *args],
                          cwd=root, capture_output=True, text=True, timeout=120, env=env)


# Each story: the editor's buffer ends as WITH_BOTH (the apply plus the person's typing)
# and the server cannot know it.
def undecodable_change(w: World) -> None:
    w.open(APPLIED, version=1)
    w.change(2, insert_at(0, -1, TYPED_LINE))


def range_past_the_end(w: World) -> None:
    w.open(APPLIED, version=1)
    w.change(2, insert_at(999, 0, TYPED_LINE))


def version_backwards(w: World) -> None:
    w.open(APPLIED, version=7)
    w.change(3, insert_at(0, 0, TYPED_LINE))


def change_before_open(w: World) -> None:
    w.change(2, {"text": WITH_BOTH})  # the server has only the disk: an undo would write under the buffer


STORIES = [
    pytest.param(undecodable_change, id="undecodable-change"),
    pytest.param(range_past_the_end, id="range-past-the-end"),
    pytest.param(version_backwards, id="version-backwards"),
    pytest.param(change_before_open, id="change-before-open"),
]


@pytest.mark.parametrize("story", STORIES)
def test_never_clobber_undo_of_a_buffer_out_of_sync(shared_world: World, story: Callable[[World], None]) -> None:
    earlier = {m["checkpoint_id"] for m in shared_world.store.checkpoints.list()}  # other tests' (restored)
    applied = cli(shared_world.root, "apply", shared_world.patch_id, "--yes")
    assert applied.returncode == 0, applied.stderr
    assert (shared_world.root / shared_world.name).read_text() == APPLIED
    shared_world.editor.buffers[shared_world.uri] = [WITH_BOTH, 2]
    story(shared_world)

    reply = shared_world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert reply.get("error", {}).get("code") == -32803, reply
    message = reply["error"]["message"]
    assert "undo refused, nothing was changed" in message and shared_world.name in message and "out of sync" in message, message
    assert shared_world.editor.edits_received == 0, "an undo edit was sent for a buffer the server cannot know"
    assert shared_world.editor.text(shared_world.uri) == WITH_BOTH  # the person's buffer, untouched
    assert (shared_world.root / shared_world.name).read_text() == APPLIED  # nor written under it
    assert [shared_world.status(0), shared_world.status(1)] == ["accepted", "accepted"]
    assert not any(m.get("restored") for m in shared_world.store.checkpoints.list()
                   if m["checkpoint_id"] not in earlier)  # still there to undo

    # The editor sends the buffer again: the same undo takes the apply out, the typing stays.
    shared_world.server.notify("textDocument/didClose", {"textDocument": {"uri": shared_world.uri}})
    shared_world.open(WITH_BOTH, version=1)
    shared_world.editor.buffers[shared_world.uri][1] = 1
    undone = shared_world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert undone.get("result", {}).get("unsaved") == [shared_world.name], undone
    assert shared_world.editor.text(shared_world.uri) == TYPED
    assert (shared_world.root / shared_world.name).read_text() == APPLIED  # the buffer's to save
    assert [shared_world.status(0), shared_world.status(1)] == ["pending", "pending"]


def test_undo_in_sync_lands_in_the_buffer(shared_world: World) -> None:
    """The control: the same undo of a buffer in sync goes through at once."""
    applied = cli(shared_world.root, "apply", shared_world.patch_id, "--yes")
    assert applied.returncode == 0, applied.stderr
    shared_world.editor.buffers[shared_world.uri] = [WITH_BOTH, 2]
    shared_world.open(APPLIED, version=1)
    shared_world.change(2, insert_at(0, 0, TYPED_LINE))
    undone = shared_world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert undone.get("result", {}).get("unsaved") == [shared_world.name], undone
    assert shared_world.editor.text(shared_world.uri) == TYPED
    assert ORIGINAL in TYPED


def test_never_clobber_undo_sent_while_an_accept_is_out(shared_world: World) -> None:
    """`deepseek.undo` (of a CLI apply of hunk B) sent right behind an Accept of hunk A whose
    edit the editor still holds: the undo waits for the accept and the buffer it gives, then
    takes only B out — A and the person's typing stay, each line where it belongs."""
    applied = cli(shared_world.root, "apply", shared_world.patch_id, "--hunk", shared_world.hunks[1], "--yes")
    assert applied.returncode == 0, applied.stderr
    with_b = (shared_world.root / shared_world.name).read_text()
    assert "inserted B" in with_b and "inserted A" not in with_b
    shared_world.editor.buffers[shared_world.uri] = [TYPED_LINE + with_b, 2]
    shared_world.open(TYPED_LINE + with_b, version=2)
    shared_world.editor.hold = True
    accepting = shared_world.accept(0)
    undoing = shared_world.server.request("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert shared_world.editor.wait_held(1)
    shared_world.editor.hold = False  # later edits (the undo's) are applied at once
    shared_world.editor.release()
    assert shared_world.server.answer(accepting)["result"]["applied"] is True
    undone = shared_world.server.answer(undoing)
    assert undone.get("result", {}).get("unsaved") == [shared_world.name], undone
    assert shared_world.editor.text(shared_world.uri) == TYPED.replace("line 2\n", "line 2\ninserted A\n"), shared_world.editor.text(shared_world.uri)
    assert [shared_world.status(0), shared_world.status(1)] == ["accepted", "pending"]
