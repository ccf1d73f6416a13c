"""An editor that opened the workspace through a symlink gets working accepts, and a symlink
never redirects a write out of the workspace.

The server works on the resolved root (the policy and the file guards check against it), but
the editor names every file under its own spelling of the root (`/home/me/proj` → `/data/proj`).
Before, the server sent edits for the resolved URIs, which never named the editor's buffers: an
Accept of a file with unsaved typing was refused ("open the file under the workspace's path"),
an undo likewise. Now the server keeps the editor's spelling of the root and speaks it both ways;
a file that resolves outside the workspace (a symlink inside it pointing out) keeps its real path
and stays refused.

The real server through pytest-lsp, with Neovim's and VS Code's capabilities, on a real
symlinked directory; the test client holds buffers and applies edits as an editor does.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsp_harness import BufferEditor, file_uri, run, start_client
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))
DIFF = """--- a/app.py
+++ b/app.py
@@ -2,3 +2,4 @@
 line 2
+inserted A
 line 3
 line 4
@@ -14,3 +15,4 @@
 line 14
 line 15
+inserted B
 line 16
"""
TYPED = "# typed, not saved\n" + ORIGINAL
WITH_A = TYPED.replace("line 2\n", "line 2\ninserted A\n")
WITH_BOTH = WITH_A.replace("line 15\n", "line 15\ninserted B\n")


class Linked:
    def __init__(self, tmp_path: Path) -> None:
        self.real = tmp_path / "data" / "proj"
        self.real.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.real)], check=True)
        self.link = tmp_path / "home" / "proj"  # what the editor opened
        self.link.parent.mkdir()
        self.link.symlink_to(self.real, target_is_directory=True)
        (self.real / "app.py").write_text(ORIGINAL)
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        (self.outside / "secret.py").write_text(ORIGINAL)
        (self.real / "escape").symlink_to(self.outside, target_is_directory=True)
        self.store = PatchStore(self.real, state_dir(self.real), policy=PathPolicy(self.real))
        patch = self.store.stage(DIFF)
        self.patch_id = patch.patch_id
        self.hunks = [h.hunk_id for h in patch.hunks]

    def status(self) -> list[str]:
        patch = self.store.get(self.patch_id)
        return [patch.hunk(h).status for h in self.hunks]


@pytest_asyncio.fixture
async def linked(tmp_path: Path, user_config_home: Path, client_name: str,
                 server_env: dict[str, str]) -> AsyncIterator[tuple[Linked, BufferEditor, object]]:
    world = Linked(tmp_path)
    client, state, _ = await start_client(world.link, client_name, server_env)
    editor = BufferEditor(client, state, world.link)
    yield world, editor, state
    await client.shutdown_session()
    await client.stop()


async def accept_hunk(world: Linked, editor: BufferEditor, state) -> None:
    uri = editor.open("app.py", TYPED)
    result = await run(editor.client, names.CMD_ACCEPT_HUNK, {"patch_id": world.patch_id, "hunk_id": world.hunks[0]})
    assert result["applied"] is True, result  # the bug: refused, the URI named no buffer of the editor
    assert result["uri"] == uri
    assert editor.text("app.py") == WITH_A


async def accept_file(world: Linked, editor: BufferEditor, state) -> None:
    uri = editor.open("app.py", TYPED)
    result = await run(editor.client, names.CMD_ACCEPT_FILE, {"patch_id": world.patch_id, "uri": uri})
    assert result["applied"] is True, result
    assert editor.text("app.py") == WITH_BOTH


async def undo_of_a_disk_apply(world: Linked, editor: BufferEditor, state) -> None:
    """Hunk B applied on disk (as `deepseek-ls apply` does), the file open with typing on top:
    `deepseek.undo` takes B out of the editor's buffer, the typing kept."""
    assert world.store.apply(world.patch_id, hunk_ids=[world.hunks[1]]).ok
    with_b = (world.real / "app.py").read_text()
    editor.open("app.py", "# typed, not saved\n" + with_b)
    undone = await run(editor.client, names.CMD_UNDO, {})
    assert undone["unsaved"] == ["app.py"], undone  # the bug: refused, the buffer was under another URI
    assert editor.text("app.py") == TYPED


async def accept_unopened(world: Linked, editor: BufferEditor, state) -> None:
    """Not open: the editor is sent an edit for the file under its own spelling and opens it."""
    result = await run(editor.client, names.CMD_ACCEPT_HUNK, {"patch_id": world.patch_id, "hunk_id": world.hunks[0]})
    assert result["applied"] is True, result
    assert [uri for uri in editor.buffers] == [file_uri(world.link, "app.py")]


async def accept_opened_under_the_real_path(world: Linked, editor: BufferEditor, state) -> None:
    """The editor names the root through the link but this buffer by its real path: the edit
    goes to the buffer it has."""
    editor.root = world.real
    uri = editor.open("app.py", TYPED)
    result = await run(editor.client, names.CMD_ACCEPT_HUNK, {"patch_id": world.patch_id, "hunk_id": world.hunks[0]})
    assert result["applied"] is True and result["uri"] == uri, result
    assert editor.text("app.py") == WITH_A


STORIES = [
    pytest.param(accept_hunk, ["accepted", "pending"], id="accept-hunk-with-unsaved-typing"),
    pytest.param(accept_file, ["accepted", "accepted"], id="accept-file-with-unsaved-typing"),
    pytest.param(undo_of_a_disk_apply, ["pending", "pending"], id="undo-with-unsaved-typing"),
    pytest.param(accept_unopened, ["accepted", "pending"], id="accept-unopened-file"),
    pytest.param(accept_opened_under_the_real_path, ["accepted", "pending"], id="accept-buffer-opened-by-real-path"),
]


@pytest.mark.parametrize(("story", "statuses"), STORIES)
async def test_never_clobber_through_a_symlinked_root(linked, story, statuses: list[str]) -> None:
    world, editor, state = linked
    await story(world, editor, state)
    assert world.status() == statuses
    for params in state.applied_edits:  # every edit named the file as the editor does
        edit = params.edit
        uris = [c.text_document.uri for c in edit.document_changes or []] + list(edit.changes or {})
        spelled = world.real if story is accept_opened_under_the_real_path else world.link
        assert uris and all(uri.startswith(spelled.as_uri() + "/") for uri in uris), uris
    if story is not undo_of_a_disk_apply:
        assert (world.real / "app.py").read_text() == ORIGINAL  # the buffer has it; the disk on save


async def test_never_clobber_outside_through_a_symlink_in_a_symlinked_root(linked) -> None:
    """`escape/` inside the workspace points out of it: under the editor's spelling of the root
    or the real one, a file there is outside the workspace — nothing staged, nothing written."""
    world, editor, state = linked
    with pytest.raises(Exception, match="outside|symlink|escape"):  # noqa: B017 - the policy's own error
        world.store.stage(DIFF.replace("app.py", "escape/secret.py"))
    for root in (world.link, world.real):
        uri = file_uri(root, "escape/secret.py")
        editor.open("escape/secret.py", TYPED) if root == world.link else None
        with pytest.raises(JsonRpcException, match="outside the workspace"):
            await run(editor.client, names.CMD_ACCEPT_FILE, {"patch_id": world.patch_id, "uri": uri})
    assert state.applied_edits == []
    assert (world.outside / "secret.py").read_text() == ORIGINAL
