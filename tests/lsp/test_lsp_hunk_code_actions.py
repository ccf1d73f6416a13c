"""Pending hunks through standard LSP (issue 32 items 1, 2, 6): a diagnostic (source "deepseek") on each
pending hunk, "Accept" / "Reject" code actions on it that settle it as the lenses do, both switchable.

One server per capability set for the module: Neovim's, VS Code's, and a minimal client with no code lens
support (as Helix or eglot); one more that pulls diagnostics. Patches are staged with the real
`PatchStore` in the test process (sealed as the server's user), then the file is opened.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import (
    BufferEditor,
    EditorState,
    decode_code_actions_as_editors_do,
    expected_version,
    run,
    start_client,
    wait_until,
)
from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

pytestmark = pytest.mark.asyncio(loop_scope="module")

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 31))
DIFF = """--- a/{name}
+++ b/{name}
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

# A client that shows diagnostics and code actions and nothing of ours: no code lenses, no
# documentChanges, no pull diagnostics (Helix, eglot).
MINIMAL = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(apply_edit=True, configuration=False),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["", "quickfix", "refactor"])))),
)


def pulling() -> types.ClientCapabilities:
    """Neovim's set, pulling diagnostics with refresh support (as Neovim 0.11 and VS Code do)."""
    from pytest_lsp import client_capabilities

    caps = client_capabilities("neovim")
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


@dataclass
class Lsp:
    name: str
    client: Any
    state: EditorState
    root: Path
    xdg: Path
    editor: BufferEditor
    capabilities: types.ServerCapabilities

    def stage(self, rel: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
        """`rel` written as ORIGINAL and two hunks staged on it as the server's user."""
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.xdg))
        (self.root / rel).write_text(ORIGINAL)
        store = PatchStore(self.root, state_dir(self.root), policy=PathPolicy(self.root))
        patch = store.stage(DIFF.format(name=rel))
        first, second = patch.hunks
        return patch.patch_id, first.hunk_id, second.hunk_id

    def ours(self, uri: str) -> list[types.Diagnostic]:
        return [d for d in self.client.diagnostics.get(uri, []) if d.source == names.HUNK_DIAGNOSTIC_SOURCE]

    async def actions(self, uri: str, line: int, diagnostics: list[types.Diagnostic] | None = None) -> list[types.CodeAction]:
        position = types.Position(line=line, character=0)
        found = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=diagnostics or [])))
        return list(found or [])

    async def settings(self, **code_actions: bool) -> None:
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"code_actions": code_actions}))
        await self.client.protocol.send_request_async(names.REQ_STATUS, {})  # answered after the notification


async def start(tmp: Path, name: str, capabilities: types.ClientCapabilities | None) -> Lsp:
    root = tmp / "ws with space"
    root.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True)
    xdg = tmp / "xdg-config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg), "DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_LS_LOG": "info"}
    client, state, result = await start_client(root, "neovim" if name == "pull" else name, env,
                                          initialization_options={"index": {"enabled": False}},
                                          capabilities=capabilities)
    decode_code_actions_as_editors_do(client)
    lsp = Lsp(name, client, state, root, xdg, BufferEditor(client, state, root), result.capabilities)
    return lsp


CAPABILITIES = {"neovim": None, "visual-studio-code": None, "minimal": MINIMAL}


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=list(CAPABILITIES))
async def lsp(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    shared = await start(tmp_path_factory.mktemp("hunk-actions"), request.param, CAPABILITIES[request.param])
    try:
        yield shared
    finally:
        await shared.client.shutdown_session()
        await shared.client.stop()


def by_title(actions: list[types.CodeAction]) -> dict[str, types.CodeAction]:
    return {a.title: a for a in actions}


async def test_pending_hunks_are_diagnostics_and_code_actions_that_settle_them(lsp, monkeypatch):
    patch_id, first, second = lsp.stage("two.py", monkeypatch)
    uri = lsp.editor.open("two.py")
    shown = await wait_until(lambda: len(lsp.ours(uri)) == 2 and lsp.ours(uri))
    at = {d.range.start.line: d for d in shown}
    assert set(at) == {2, 20}
    assert at[2].severity == types.DiagnosticSeverity.Information
    assert at[2].range.end == types.Position(line=2, character=len("line 3"))
    assert "replaces 1 line with 1 line: line three" in at[2].message
    assert "adds 1 line: line 20.5" in at[20].message

    assert await lsp.actions(uri, 10) == []  # no hunk there: nothing offered
    offered = by_title(await lsp.actions(uri, 2, [at[2]]))
    assert list(offered) == [
        "Accept DeepSeek change (line 3)", "Reject DeepSeek change (line 3)",
        "Accept all DeepSeek changes in this file (2)", "Reject all DeepSeek changes in this file (2)",
        "Accept all pending DeepSeek changes", "Reject all pending DeepSeek changes"]
    accept = offered["Accept DeepSeek change (line 3)"]
    assert accept.kind == types.CodeActionKind.QuickFix and accept.edit is None
    # The lens's own command and arguments: one accept path.
    assert accept.command.command == names.CMD_ACCEPT_HUNK
    assert list(accept.command.arguments) == [{"patch_id": patch_id, "hunk_id": first}]

    result = await run(lsp.client, accept.command.command, accept.command.arguments[0])
    assert result["applied"] is True
    (edit,) = lsp.state.applied_edits[-1:]
    version = edit.edit.document_changes[0].text_document.version if edit.edit.document_changes else "unversioned"
    assert version == expected_version(lsp.name, 1)
    assert lsp.editor.text("two.py") == ORIGINAL.replace("line 3\n", "line three\n")
    left = await wait_until(lambda: len(lsp.ours(uri)) == 1 and lsp.ours(uri))
    assert left[0].range.start.line == 20 and left[0].data["hunk_id"] == second

    reject = by_title(await lsp.actions(uri, 20))["Reject DeepSeek change (line 21)"]
    assert reject.command.command == names.CMD_REJECT_HUNK
    edits = len(lsp.state.applied_edits)
    assert (await run(lsp.client, reject.command.command, reject.command.arguments[0]))["rejected"] is True
    await wait_until(lambda: lsp.ours(uri) == [])  # settled: gone
    assert len(lsp.state.applied_edits) == edits  # rejecting writes nothing
    assert await lsp.actions(uri, 2) == [] and await lsp.actions(uri, 20) == []
    assert (lsp.root / "two.py").read_text() == ORIGINAL  # nothing reached the disk: the buffer holds it


async def test_never_clobber_accept_via_code_action_after_the_person_edited_the_hunk_lines(lsp, monkeypatch):
    """The person rewrote the hunk's line after the change was proposed: Accept from the code action
    refuses (as the lens does), sends no edit, keeps their text and the hunk pending."""
    lsp.stage("mine.py", monkeypatch)
    uri = lsp.editor.open("mine.py")
    await wait_until(lambda: len(lsp.ours(uri)) == 2)
    accept = by_title(await lsp.actions(uri, 2))["Accept DeepSeek change (line 3)"]
    mine = ORIGINAL.replace("line 3\n", "line 3 is mine now\n")
    lsp.editor.type("mine.py", mine)
    edits = len(lsp.state.applied_edits)
    result = await run(lsp.client, accept.command.command, accept.command.arguments[0])
    assert result["applied"] is False and "conflicts" in result["message"]
    assert len(lsp.state.applied_edits) == edits and lsp.editor.text("mine.py") == mine
    assert any(t.startswith("Reject") for t in by_title(await lsp.actions(uri, 2)))  # still pending
    assert len(lsp.ours(uri)) == 2


async def test_never_clobber_accept_file_via_code_action_merges_around_the_persons_edit(lsp, monkeypatch):
    """An edit elsewhere in the file: the file's Accept merges both hunks around it (3-way), the person's
    line survives."""
    lsp.stage("merge.py", monkeypatch)
    uri = lsp.editor.open("merge.py")
    await wait_until(lambda: len(lsp.ours(uri)) == 2)
    mine = ORIGINAL.replace("line 10\n", "line 10 edited by hand\n")
    lsp.editor.type("merge.py", mine)
    accept_file = by_title(await lsp.actions(uri, 20))["Accept all DeepSeek changes in this file (2)"]
    assert accept_file.command.command == names.CMD_ACCEPT_FILE
    result = await run(lsp.client, accept_file.command.command, accept_file.command.arguments[0])
    assert result["applied"] is True
    text = lsp.editor.text("merge.py")
    assert "line 10 edited by hand\n" in text and "line three\n" in text and "line 20\nline 20.5\n" in text
    await wait_until(lambda: lsp.ours(uri) == [])


async def test_the_switches_turn_hunk_actions_and_diagnostics_off_and_on(lsp, monkeypatch):
    lsp.stage("switch.py", monkeypatch)
    uri = lsp.editor.open("switch.py")
    await wait_until(lambda: len(lsp.ours(uri)) == 2)
    try:
        await lsp.settings(hunk_actions=False, hunk_diagnostics=False)
        await wait_until(lambda: lsp.ours(uri) == [])
        assert await lsp.actions(uri, 2) == []
        await lsp.settings(hunk_actions=True, hunk_diagnostics=True)
        await wait_until(lambda: len(lsp.ours(uri)) == 2)
        assert await lsp.actions(uri, 2)
    finally:
        await lsp.settings(hunk_actions=True, hunk_diagnostics=True)


async def test_diagnostics_follow_the_hunk_as_the_person_types_above_it(lsp, monkeypatch):
    lsp.stage("moves.py", monkeypatch)
    uri = lsp.editor.open("moves.py")
    await wait_until(lambda: len(lsp.ours(uri)) == 2)
    lsp.editor.type("moves.py", "# a new first line\n" + ORIGINAL)
    moved = await wait_until(lambda: {d.range.start.line for d in lsp.ours(uri)} == {3, 21} and lsp.ours(uri))
    assert len(moved) == 2
    assert [a.title for a in await lsp.actions(uri, 3)][0] == "Accept DeepSeek change (line 4)"


async def test_a_client_that_pulls_gets_them_by_pull_only_and_is_asked_to_pull_again(tmp_path_factory, monkeypatch):
    lsp = await start(tmp_path_factory.mktemp("pull"), "pull", pulling())
    try:
        assert lsp.capabilities.diagnostic_provider is not None and lsp.capabilities.code_action_provider is not None
        patch_id, first, _ = lsp.stage("pulled.py", monkeypatch)
        uri = lsp.editor.open("pulled.py")

        async def pull() -> list[types.Diagnostic]:
            report = await lsp.client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            return [d for d in report.items if d.source == names.HUNK_DIAGNOSTIC_SOURCE]

        assert {d.range.start.line for d in await pull()} == {2, 20}
        refreshes = lsp.client.diagnostic_refresh_count
        assert (await run(lsp.client, names.CMD_REJECT_HUNK, {"patch_id": patch_id, "hunk_id": first}))["rejected"]
        await wait_until(lambda: lsp.client.diagnostic_refresh_count > refreshes)  # told to pull again
        assert [d.range.start.line for d in await pull()] == [20]
        assert lsp.ours(uri) == []  # never pushed as well: an editor would show each twice
    finally:
        await lsp.client.shutdown_session()
        await lsp.client.stop()
