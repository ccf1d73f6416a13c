"""Position encodings (LSP 3.17 `general.positionEncodings`): the server uses the
client's choice for every column it sends and reads. Hunks sit on lines with
emoji and CJK text; accepting them must give exactly the expected buffer in
utf-8, utf-16 and utf-32, also through incremental `didChange` and at the end
of a file without a final newline."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import editor_apply, file_uri, lenses, open_doc, run, start_client, text_edits
from lsprotocol import types
from pytest_lsp import client_capabilities

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

ENCODINGS = ["utf-8", "utf-16", "utf-32"]

ORIGINAL = "head\nsmile = '😀 中文'  # 🎉\n" + "".join(f"filler {i}\n" for i in range(8)) + "end = '🎉 終'"
MIDDLE_DONE = ORIGINAL.replace("smile = '😀 中文'  # 🎉", "smile = '😀 中文!'  # 🎉")
BOTH_DONE = MIDDLE_DONE.replace("end = '🎉 終'", "end = '🎉 終了 🚀'")
# Hunk 1 changes the emoji line in the middle; hunk 2 the last line, which has no newline.
DIFF = """--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 head
-smile = '😀 中文'  # 🎉
+smile = '😀 中文!'  # 🎉
 filler 0
@@ -10,2 +10,2 @@
 filler 7
-end = '🎉 終'
\\ No newline at end of file
+end = '🎉 終了 🚀'
\\ No newline at end of file
"""


def capabilities(offered: list[str] | None) -> types.ClientCapabilities:
    """Neovim's capabilities, offering exactly `offered` position encodings."""
    caps = client_capabilities("neovim")
    caps.general = types.GeneralClientCapabilities(position_encodings=offered)
    return caps


@pytest.fixture
async def encoded_editor(request, workspace: Path, server_env: dict[str, str]):
    encoding = request.param
    client, state, result = await start_client(workspace, "neovim", server_env, capabilities=capabilities([encoding]))
    assert result.capabilities.position_encoding == encoding
    yield client, state, encoding
    await client.shutdown_session()
    await client.stop()


@pytest.fixture
def staged(workspace: Path):
    (workspace / "app.py").write_text(ORIGINAL, encoding="utf-8")
    store = PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace))
    patch = store.stage(DIFF)
    first, second = patch.hunks
    return store, patch.patch_id, first.hunk_id, second.hunk_id


def as_changes(edits: list[types.TextEdit]) -> list[types.TextDocumentContentChangePartial]:
    """The editor applied `edits`: its incremental didChange events, last edit first
    (so each range is still valid when it arrives)."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    return [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered]


def did_change(client, uri: str, version: int, changes: list) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=changes
        )
    )


def units(text: str, encoding: str) -> int:
    return len(text.encode({"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding])) // {
        "utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]


@pytest.mark.parametrize("encoded_editor", ENCODINGS, indirect=True)
async def test_never_clobber_accepting_hunks_next_to_emoji_and_cjk(encoded_editor, workspace: Path, staged) -> None:
    client, state, encoding = encoded_editor
    store, patch_id, first, second = staged
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=1)
    titles = {(lens.command.title, lens.range.start.line) for lens in await lenses(client, uri)}
    assert ("Accept", 1) in titles and ("Accept", 10) in titles

    # The last line (no newline, emoji): its end column is counted in the negotiated encoding.
    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": second})
    assert result["applied"] is True
    edits = text_edits(state.applied_edits[-1])
    assert edits[-1].range.end == types.Position(line=10, character=units("end = '🎉 終'", encoding))
    after = editor_apply(ORIGINAL, edits, encoding)
    assert after == ORIGINAL.replace("end = '🎉 終'", "end = '🎉 終了 🚀'")
    did_change(client, uri, 2, as_changes(edits))

    # The editor's incremental change went through the server's document sync: the
    # next hunk is computed against exactly the buffer the editor has.
    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": first})
    assert result["applied"] is True and result.get("message") is None  # no 3-way merge was needed
    final = editor_apply(after, text_edits(state.applied_edits[-1]), encoding)
    assert final == BOTH_DONE
    assert {h.status for h in store.get(patch_id).hunks} == {"accepted"}


def insert(at: types.Position, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text)


@pytest.mark.parametrize("encoded_editor", ENCODINGS, indirect=True)
async def test_never_clobber_typing_emoji_on_the_hunk_line_before_accepting(
    encoded_editor, workspace: Path, staged
) -> None:
    client, state, encoding = encoded_editor
    store, patch_id, first, second = staged
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=1)
    # The person types "🚀x" right after the emoji on the last line (incremental, in the encoding).
    at = types.Position(line=10, character=units("end = '🎉", encoding))
    did_change(client, uri, 2, [insert(at, "🚀x")])
    # The hunk's old text is gone from the buffer: accepting refuses and sends nothing.
    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": second})
    assert result["applied"] is False and "conflicts" in result["message"]
    assert state.applied_edits == []

    # They delete it again (a range ending after a non-BMP character) and type
    # elsewhere, before an emoji; the server's buffer must follow exactly.
    gone = types.Range(start=at, end=types.Position(line=10, character=at.character + units("🚀x", encoding)))
    did_change(client, uri, 3, [types.TextDocumentContentChangePartial(range=gone, text="")])
    did_change(client, uri, 4, [insert(types.Position(line=1, character=units("smile = '", encoding)), "é")])
    typed = ORIGINAL.replace("smile = '😀", "smile = 'é😀")

    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": second})
    assert result["applied"] is True
    after = editor_apply(typed, text_edits(state.applied_edits[-1]), encoding)
    assert after == typed.replace("end = '🎉 終'", "end = '🎉 終了 🚀'")
    assert store.get(patch_id).hunk(first).status == "pending"


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        pytest.param(["utf-8"], "utf-8", id="only utf-8"),
        pytest.param(["utf-32", "utf-8"], "utf-32", id="the client's first choice"),
        pytest.param(["utf-7", "utf-16"], "utf-16", id="unknown ones skipped"),
        pytest.param(None, "utf-16", id="nothing offered: utf-16"),
        pytest.param([], "utf-16", id="empty list: utf-16"),
    ],
)
async def test_the_client_offer_decides_the_encoding(
    workspace: Path, server_env: dict[str, str], offered, chosen
) -> None:
    client, _, result = await start_client(workspace, "neovim", server_env, capabilities=capabilities(offered))
    try:
        assert result.capabilities.position_encoding == chosen
    finally:
        await client.shutdown_session()
        await client.stop()
