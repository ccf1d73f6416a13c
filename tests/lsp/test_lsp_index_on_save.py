"""Saves and watched-file changes update the code index (debounced per burst)."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import file_uri, start_client, wait_until
from lsprotocol import types

from deepseek_ls.config_models import IndexConfig
from deepseek_ls.index import CodeIndex
from deepseek_ls.workspace import state_dir


def _hits(workspace: Path, text: str) -> list:
    """Query from this process; an update the server is writing right now may be
    half-visible (reported as unavailable), so that counts as "not yet"."""
    try:
        return CodeIndex(workspace, state_dir(workspace), IndexConfig()).query(text).hits
    except Exception:  # noqa: BLE001 - retried by wait_until
        return []


async def test_a_save_reindexes_the_file(workspace: Path, client_name: str, server_env: dict[str, str]) -> None:
    (workspace / "notes.py").write_text("def old_name():\n    pass\n")
    index = CodeIndex(workspace, state_dir(workspace), IndexConfig())
    index.build()
    assert not index.query("zebra_unicorn_token").hits

    client, state, _ = await start_client(workspace, client_name, server_env)
    try:
        (workspace / "notes.py").write_text("def zebra_unicorn_token():\n    pass\n")
        uri = file_uri(workspace, "notes.py")
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        hits = await wait_until(lambda: _hits(workspace, "zebra_unicorn_token"), timeout=60)
        assert [h.path for h in hits] == ["notes.py"]

        (workspace / "other.py").write_text("QUOKKA_MARKER = 1\n")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=file_uri(workspace, "other.py"), type=types.FileChangeType.Created)]))
        hits = await wait_until(lambda: _hits(workspace, "QUOKKA_MARKER"), timeout=60)
        assert [h.path for h in hits] == ["other.py"]
        if client_name == "visual-studio-code":  # it supports dynamic registration of file watchers
            await wait_until(lambda: state.registrations)
            assert state.registrations[0].method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    finally:
        await client.shutdown_session()
        await client.stop()
