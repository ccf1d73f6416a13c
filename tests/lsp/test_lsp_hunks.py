"""Staged hunks in the editor: lenses on the right lines, accept through a
versioned `workspace/applyEdit`, reject, and never clobber a changed buffer.

Patches are staged with the real `PatchStore` in the test process; the server
subprocess reads the same `.deepseek/patches/` store.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import edited_text, expected_version, file_uri, lenses, open_doc, replace_all, run, text_edits
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 31))
# Two hunks: line 3 changed, a line added after line 20.
DIFF = """--- a/app.py
+++ b/app.py
@@ -2,3 +2,3 @@
 line 2
-line 3
+line three
 line 4
@@ -19,3 +19,4 @@
 line 19
 line 20
+line 20.5
 line 21
"""


@pytest.fixture
def staged(workspace: Path):
    (workspace / "app.py").write_text(ORIGINAL)
    store = PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace))
    patch = store.stage(DIFF)
    first, second = patch.hunks
    return store, patch.patch_id, first.hunk_id, second.hunk_id


async def test_hunk_lenses_accept_one_reject_other(editor, workspace: Path, staged, client_name: str) -> None:
    client, state = editor
    store, patch_id, first, second = staged
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=7)

    found = await lenses(client, uri)
    by_title = {(lens.command.title, lens.range.start.line) for lens in found}
    # First changed line of hunk 1 is "line 3" (0-based 2); hunk 2 adds after "line 20" (0-based 20).
    assert ("Accept", 2) in by_title and ("Reject", 2) in by_title
    assert ("Accept", 20) in by_title and ("Reject", 20) in by_title
    assert ("Accept all (2)", 0) in by_title

    hunks = await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    assert hunks.version == 7
    assert [h.hunk_id for h in hunks.hunks] == [first, second]
    assert hunks.hunks[1].added == [20]

    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": first})
    assert result["applied"] is True and result["version"] == 7
    assert len(state.applied_edits) == 1
    after, version = edited_text(ORIGINAL, state.applied_edits[0])
    assert version == expected_version(client_name, 7)
    assert after == ORIGINAL.replace("line 3\n", "line three\n")  # exactly hunk 1, not hunk 2
    edits = text_edits(state.applied_edits[0])
    assert len(edits) == 1 and edits[0].range.start.line == 2 and edits[0].range.end.line == 3

    # The editor applied it: its buffer moves to version 8.
    replace_all(client, uri, after, version=8)
    rejected = await run(client, names.CMD_REJECT_HUNK, {"patch_id": patch_id, "hunk_id": second})
    assert rejected["rejected"] is True
    assert len(state.applied_edits) == 1  # rejecting sends nothing

    statuses = {h.hunk_id: h.status for h in store.get(patch_id).hunks}
    assert statuses == {first: "accepted", second: "rejected"}
    assert [lens for lens in await lenses(client, uri) if "Accept" in lens.command.title] == []
    assert state.notifications.get("deepseek/hunksChanged")
    # Server logs reach the editor's log too (window/logMessage).
    assert any("applied" in m.message and first in m.message for m in client.log_messages)


async def test_typing_elsewhere_rebases_onto_the_current_version(
    editor, workspace: Path, staged, client_name: str
) -> None:
    client, state = editor
    _, patch_id, first, _ = staged
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=1)
    typed = "# a comment the user typed\n" + ORIGINAL
    replace_all(client, uri, typed, version=2)

    found = await lenses(client, uri)
    assert ("Accept", 3) in {(lens.command.title, lens.range.start.line) for lens in found}

    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": first})
    assert result["applied"] is True
    after, version = edited_text(typed, state.applied_edits[0])
    assert version == expected_version(client_name, 2)
    assert after == typed.replace("line 3\n", "line three\n")  # the user's line is kept


async def test_conflicting_edit_is_refused_and_nothing_is_recorded(editor, workspace: Path, staged) -> None:
    client, state = editor
    store, patch_id, first, _ = staged
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=1)
    mine = ORIGINAL.replace("line 3\n", "line 3 edited by me\n")
    replace_all(client, uri, mine, version=2)

    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": first})
    assert result["applied"] is False
    assert "conflicts" in result["message"]
    assert state.applied_edits == []
    assert store.get(patch_id).hunk(first).status == "pending"
    assert any("not applied" in m.message for m in client.messages)
    assert (workspace / "app.py").read_text() == ORIGINAL


async def test_editor_refusing_the_edit_records_nothing(editor, workspace: Path, staged) -> None:
    client, state = editor
    store, patch_id, first, _ = staged
    state.apply_result = False
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=3)
    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": first})
    assert result["applied"] is False and "refused" in result["message"]
    assert store.get(patch_id).hunk(first).status == "pending"


async def test_accept_file_of_an_unopened_file_sends_a_null_version(
    editor, workspace: Path, staged, client_name: str
) -> None:
    client, state = editor
    store, patch_id, first, second = staged
    result = await run(client, names.CMD_ACCEPT_FILE, {"patch_id": patch_id, "uri": file_uri(workspace)})
    assert result["applied"] is True
    after, version = edited_text(ORIGINAL, state.applied_edits[0])
    assert version == expected_version(client_name, None)
    assert after == ORIGINAL.replace("line 3\n", "line three\n").replace("line 20\n", "line 20\nline 20.5\n")
    assert {h.status for h in store.get(patch_id).hunks} == {"accepted"}


async def test_unknown_hunk_is_a_clear_error(editor, workspace: Path, staged) -> None:
    client, _ = editor
    _, patch_id, _, _ = staged
    with pytest.raises(JsonRpcException, match="no hunk"):
        await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": "nope"})
    assert any("no hunk" in m.message for m in client.messages)


NEW_FILE = """--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+def fresh():
+    return 1
"""
DELETE_FILE = """--- a/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-def stale():
-    return 0
"""


async def test_accepting_a_new_file_creates_it_in_the_editor(editor, workspace: Path, client_name: str) -> None:
    client, state = editor
    store = PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace))
    patch = store.stage(NEW_FILE)
    uri = file_uri(workspace, "pkg/new.py")
    result = await run(client, names.CMD_ACCEPT_FILE, {"patch_id": patch.patch_id, "uri": uri})
    assert result["applied"] is True
    edit = state.applied_edits[0].edit
    if client_name == "visual-studio-code":
        create, text_edit = edit.document_changes
        assert isinstance(create, types.CreateFile) and create.uri == uri
        assert text_edit.text_document.version is None
        assert "".join(e.new_text for e in text_edit.edits) == "def fresh():\n    return 1\n"
    else:  # no documentChanges: plain changes, which Neovim applies to a new buffer
        assert "".join(e.new_text for e in edit.changes[uri]) == "def fresh():\n    return 1\n"
    assert not (workspace / "pkg" / "new.py").exists()  # the editor creates it, not the server


async def test_accepting_a_deletion_deletes_through_the_editor_or_says_how(
    editor, workspace: Path, client_name: str
) -> None:
    client, state = editor
    (workspace / "old.py").write_text("def stale():\n    return 0\n")
    store = PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace))
    patch = store.stage(DELETE_FILE)
    uri = file_uri(workspace, "old.py")
    result = await run(client, names.CMD_ACCEPT_FILE, {"patch_id": patch.patch_id, "uri": uri})
    if client_name == "visual-studio-code":
        assert result["applied"] is True
        (delete,) = state.applied_edits[0].edit.document_changes
        assert isinstance(delete, types.DeleteFile) and delete.uri == uri
    else:
        assert result["applied"] is False and "deepseek-ls apply" in result["message"]
        assert state.applied_edits == []
        assert store.get(patch.patch_id).hunks[0].status == "pending"
    assert (workspace / "old.py").exists()


async def test_patches_staged_by_another_process_show_up(editor, workspace: Path) -> None:
    client, _ = editor
    (workspace / "app.py").write_text(ORIGINAL)
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL)
    assert not await lenses(client, uri)  # nothing staged yet (and no .deepseek/ made)
    # e.g. `deepseek-ls diff`/`run` in a terminal stages a patch meanwhile
    PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace)).stage(DIFF)
    titles = {(lens.command.title, lens.range.start.line) for lens in await lenses(client, uri)}
    assert ("Accept", 2) in titles and ("Accept", 20) in titles
