"""Never clobber on undo when the server's copy of a buffer is not the editor's.

`deepseek.undo` (and a mission's undo, the same code) computes its edit from the server's
copy of each buffer, as an accept does, so it goes through the same check: while a file
it would restore is out of sync (a change the server could not read or place, versions
going backwards, a change to a document never opened), the undo is refused, nothing is
sent or written, and the checkpoint stays for later; once the editor sends the buffer
again, the same undo goes through and keeps what the person typed. The real server
process over raw JSON-RPC with the editor of `test_hostile_editor_buffers.py`; the apply
to undo is made by the real CLI (`deepseek-ls apply`), on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, TYPED_LINE, WITH_BOTH, World, insert_at, world  # noqa: F401

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
def test_never_clobber_undo_of_a_buffer_out_of_sync(world: World, story: Callable[[World], None]) -> None:
    applied = cli(world.root, "apply", world.patch_id, "--yes")
    assert applied.returncode == 0, applied.stderr
    assert (world.root / "app.py").read_text() == APPLIED
    world.editor.buffers[world.uri] = [WITH_BOTH, 2]
    story(world)

    reply = world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert reply.get("error", {}).get("code") == -32803, reply
    message = reply["error"]["message"]
    assert "undo refused, nothing was changed" in message and "app.py" in message and "out of sync" in message, message
    assert world.editor.edits_received == 0, "an undo edit was sent for a buffer the server cannot know"
    assert world.editor.text(world.uri) == WITH_BOTH  # the person's buffer, untouched
    assert (world.root / "app.py").read_text() == APPLIED  # nor written under it
    assert [world.status(0), world.status(1)] == ["accepted", "accepted"]
    assert not any(m.get("restored") for m in world.store.checkpoints.list())  # still there to undo

    # The editor sends the buffer again: the same undo takes the apply out, the typing stays.
    world.server.notify("textDocument/didClose", {"textDocument": {"uri": world.uri}})
    world.open(WITH_BOTH, version=1)
    world.editor.buffers[world.uri][1] = 1
    undone = world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert undone.get("result", {}).get("unsaved") == ["app.py"], undone
    assert world.editor.text(world.uri) == TYPED
    assert (world.root / "app.py").read_text() == APPLIED  # the buffer's to save
    assert [world.status(0), world.status(1)] == ["pending", "pending"]


def test_undo_in_sync_lands_in_the_buffer(world: World) -> None:
    """The control: the same undo of a buffer in sync goes through at once."""
    applied = cli(world.root, "apply", world.patch_id, "--yes")
    assert applied.returncode == 0, applied.stderr
    world.editor.buffers[world.uri] = [WITH_BOTH, 2]
    world.open(APPLIED, version=1)
    world.change(2, insert_at(0, 0, TYPED_LINE))
    undone = world.server.call("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert undone.get("result", {}).get("unsaved") == ["app.py"], undone
    assert world.editor.text(world.uri) == TYPED
    assert ORIGINAL in TYPED


def test_never_clobber_undo_sent_while_an_accept_is_out(world: World) -> None:
    """`deepseek.undo` (of a CLI apply of hunk B) sent right behind an Accept of hunk A whose
    edit the editor still holds: the undo waits for the accept and the buffer it gives, then
    takes only B out — A and the person's typing stay, each line where it belongs."""
    applied = cli(world.root, "apply", world.patch_id, "--hunk", world.hunks[1], "--yes")
    assert applied.returncode == 0, applied.stderr
    with_b = (world.root / "app.py").read_text()
    assert "inserted B" in with_b and "inserted A" not in with_b
    world.editor.buffers[world.uri] = [TYPED_LINE + with_b, 2]
    world.open(TYPED_LINE + with_b, version=2)
    world.editor.hold = True
    accepting = world.accept(0)
    undoing = world.server.request("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    assert world.editor.wait_held(1)
    world.editor.hold = False  # later edits (the undo's) are applied at once
    world.editor.release()
    assert world.server.answer(accepting)["result"]["applied"] is True
    undone = world.server.answer(undoing)
    assert undone.get("result", {}).get("unsaved") == ["app.py"], undone
    assert world.editor.text(world.uri) == TYPED.replace("line 2\n", "line 2\ninserted A\n"), world.editor.text(world.uri)
    assert [world.status(0), world.status(1)] == ["accepted", "pending"]
