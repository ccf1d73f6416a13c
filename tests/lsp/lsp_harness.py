"""Helpers of the end-to-end tests: start the real server under a pytest-lsp
client that answers like an editor and records what it received."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

CLIENTS = ["neovim", "visual-studio-code"]

SERVER_COMMAND = [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"]

APP = '''def greet(name):
    return "Hello " + name


def add(a, b):
    return a - b
'''

TEST_APP = '''from app import add


def test_add():
    assert add(2, 3) == 5
'''


class EditorState:
    """What the test client (the 'editor') received and how it answers."""

    def __init__(self) -> None:
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.apply_result = True
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.message_answer: Callable[[types.ShowMessageRequestParams], str | None] = lambda p: None
        self.notifications: dict[str, list[Any]] = {}
        self.lens_refreshes = 0
        self.registrations: list[types.Registration] = []
        # Called with each workspace/applyEdit before it is answered (an editor that applies it).
        self.on_apply: Callable[[types.ApplyWorkspaceEditParams], None] | None = None


def install_editor_handlers(client: LanguageClient, state: EditorState) -> None:
    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        state.applied_edits.append(params)
        if not state.apply_result:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="test editor refused")
        if state.on_apply is not None:
            state.on_apply(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        state.message_requests.append(params)
        title = state.message_answer(params)
        return types.MessageActionItem(title=title) if title else None

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        state.registrations.extend(params.registrations)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        state.lens_refreshes += 1

    for method in ("deepseek/stream", "deepseek/status", "deepseek/hunksChanged", "deepseek/attention"):

        def record(params: Any, method: str = method) -> None:
            state.notifications.setdefault(method, []).append(params)

        client.feature(method)(record)


async def start_client(
    root: Path,
    client_name: str,
    env: dict[str, str],
    initialization_options: Any = None,
    command: list[str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> tuple[LanguageClient, EditorState, types.InitializeResult]:
    client = await ClientServerConfig(server_command=command or SERVER_COMMAND, server_env=env).start()
    state = EditorState()
    install_editor_handlers(client, state)
    uri = from_fs_path(str(root))
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities(client_name),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=root.name)],
            initialization_options=initialization_options,
        )
    )
    return client, state, result


# No index, no retries, and an approval nobody answers ends after 1 s: the agent tests' settings.
AGENT_SETTINGS = {"index": {"enabled": False}, "llm": {"max_retries": 0}, "policy": {"approval_timeout_seconds": 1}}


async def start_on_git_workspace(
    tmp: Path, fake: Any, settings: Any = None, capabilities: types.ClientCapabilities | None = None,
) -> tuple[Path, LanguageClient, EditorState]:
    """A new git workspace under `tmp` (its path with a space) and the real server on it as Neovim
    starts it: the fake DeepSeek as its model, a user config of its own, the PATH this process has."""
    root = tmp / "ws with space"
    root.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "xdg-config"), "DEEPSEEK_BASE_URL": fake.base_url,
           "DEEPSEEK_API_KEY": "test-key"}
    client, state, _ = await start_client(root, "neovim", env, initialization_options=settings or AGENT_SETTINGS,
                                          capabilities=capabilities)
    return root, client, state


async def wait_until(predicate: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll `predicate` until truthy (for server-initiated messages)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met within timeout")
        await asyncio.sleep(0.02)


async def wait_until_async(ask: Callable[[], Any], check: Callable[[Any], Any], timeout: float = 60.0) -> Any:
    """Repeat the request `ask()` until `check(result)` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await ask()
        if check(result):
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within timeout; last result: {result!r}")
        await asyncio.sleep(0.05)


def file_uri(root: Path, rel: str = "app.py") -> str:
    return from_fs_path(str(root / rel))


def open_doc(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def replace_all(client, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def lenses(client, uri: str) -> list[types.CodeLens]:
    return await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def decode_code_actions_as_editors_do(client) -> None:
    """lsprotocol's client-side hook takes every item with a `command` for a `Command`, so a
    `CodeAction` carrying a command decodes wrong in the test client (editors read `kind`, `title`
    and a command object): tell them apart by the type of `command`, as the LSP spec does."""
    converter = client.protocol._converter

    def hook(obj: dict, _: type) -> types.Command | types.CodeAction:
        return converter.structure(obj, types.Command if isinstance(obj.get("command"), str) else types.CodeAction)

    # typing.Union, not `X | Y`: the hook is looked up by the type lsprotocol declares.
    converter.register_structure_hook(Union[types.Command, types.CodeAction], hook)  # noqa: UP007


# Scripted answers to window/showMessageRequest that are no item: the person never answers
# ("never"), or answers elsewhere, with deepseek.deny ("command") or deepseek.cancel ("cancel").
HELD_ANSWERS = ("never", "command", "cancel")


def script_message_answers(client, scripted: Any) -> asyncio.Event:
    """Answer the server's window/showMessageRequest as `scripted.answer` says at the time: an item's
    title, None (dismissed), or one of HELD_ANSWERS (held until the returned event is set, then
    dismissed). Each request is appended to `scripted.asked`. Set the event before stopping."""
    held = asyncio.Event()

    async def show_message_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        scripted.asked.append(params)
        if scripted.answer in HELD_ANSWERS:
            await held.wait()
            return None
        return types.MessageActionItem(title=scripted.answer) if scripted.answer else None

    client.protocol.fm.features.pop(types.WINDOW_SHOW_MESSAGE_REQUEST, None)
    client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(show_message_request)
    return held


async def set_code_actions(client, **switches: bool) -> None:
    """Change the `[code_actions]` switches as an editor does, and return once the server has them."""
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"code_actions": switches}))
    await client.protocol.send_request_async("deepseek/status", {})  # answered after the notification


async def run(client, command: str, args: dict) -> object:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[args])
    )


# A two-line file and a patch changing both lines: the gated-patch tests (approvals, odd editor answers).
CFG_ORIGINAL = "a = 1\nb = 2\n"
CFG_DIFF = """--- a/cfg.py
+++ b/cfg.py
@@ -1,2 +1,2 @@
-a = 1
-b = 2
+a = 10
+b = 20
"""

# The executor's answer that fixes APP's `add`.
ADD_FIX = """```diff
--- a/app.py
+++ b/app.py
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```"""

UNVERSIONED = "unversioned"


# Python codec and bytes per code unit of each LSP position encoding.
_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def editor_apply(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    """Apply `edits` the way an editor does, written apart from the server's own
    position code: a column is found by encoding the line and cutting its bytes;
    a line past the end is the end of the text. Lines end at \n (test texts
    have no lone \r)."""
    codec, width = _CODECS[encoding]
    lines = text.split("\n")

    def offset(pos: types.Position) -> int:
        if pos.line >= len(lines):
            return len(text)
        data = lines[pos.line].encode(codec)
        assert pos.character * width <= len(data), f"column {pos.character} is past the end of line {pos.line}"
        column = len(data[: pos.character * width].decode(codec))  # a cut inside a character raises
        return sum(len(x) + 1 for x in lines[: pos.line]) + column

    out, at = [], 0
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character)):
        start, end = offset(e.range.start), offset(e.range.end)
        assert start >= at, "overlapping edits"
        out += [text[at:start], e.new_text]
        at = end
    return "".join(out) + text[at:]


def edited_text(
    before: str, edit_params: types.ApplyWorkspaceEditParams, encoding: str = "utf-16"
) -> tuple[str, object]:
    """What the editor's buffer becomes, and the version the edit was made for:
    a versioned TextDocumentEdit when the client supports `documentChanges`
    (VS Code), else plain `changes` (Neovim's advertised capabilities).
    Columns are in `encoding`, the one negotiated at initialize."""
    edit = edit_params.edit
    if edit.document_changes is not None:
        assert len(edit.document_changes) == 1
        doc_edit = edit.document_changes[0]
        text_edits, version = doc_edit.edits, doc_edit.text_document.version
    else:
        assert edit.changes is not None and len(edit.changes) == 1
        (text_edits,) = edit.changes.values()
        version = UNVERSIONED
    return editor_apply(before, list(text_edits), encoding), version


def expected_version(client_name: str, version: int | None) -> object:
    return version if client_name == "visual-studio-code" else UNVERSIONED


def text_edits(edit_params: types.ApplyWorkspaceEditParams) -> list[types.TextEdit]:
    edit = edit_params.edit
    if edit.document_changes is not None:
        return list(edit.document_changes[0].edits)
    return list(next(iter(edit.changes.values())))


class BufferEditor:
    """An editor with buffers: `workspace/applyEdit` changes the buffer (a file not open yet is
    opened, as VS Code and Neovim do) and sends it back (didOpen / didChange); nothing reaches the
    disk until `save`. Install with `BufferEditor(client, state, root)`."""

    def __init__(self, client, state: EditorState, root: Path, encoding: str = "utf-16") -> None:
        self.client, self.root, self.encoding = client, root, encoding
        self.buffers: dict[str, tuple[str, int]] = {}  # uri -> (text, version)
        state.on_apply = self.apply

    def open(self, rel: str, text: str | None = None) -> str:
        uri = file_uri(self.root, rel)
        text = (self.root / rel).read_text() if text is None else text
        self.buffers[uri] = (text, 1)
        open_doc(self.client, uri, text, version=1)
        return uri

    def text(self, rel: str) -> str:
        return self.buffers[file_uri(self.root, rel)][0]

    def apply(self, params: types.ApplyWorkspaceEditParams) -> None:
        edit = params.edit
        if edit.document_changes is not None:
            pairs = []
            for change in edit.document_changes:
                assert isinstance(change, types.TextDocumentEdit), f"unexpected resource operation {change!r}"
                held = self.buffers.get(change.text_document.uri)
                if change.text_document.version is not None and held is not None:
                    assert change.text_document.version == held[1], "edit made for another version of the buffer"
                pairs.append((change.text_document.uri, list(change.edits)))
        else:
            pairs = [(uri, list(edits)) for uri, edits in (edit.changes or {}).items()]
        for uri, edits in pairs:
            if uri in self.buffers:
                before, version = self.buffers[uri]
                after = editor_apply(before, edits, self.encoding)
                self.buffers[uri] = (after, version + 1)
                replace_all(self.client, uri, after, version=version + 1)
            else:
                path = Path(to_fs_path(uri))
                after = editor_apply(path.read_text() if path.exists() else "", edits, self.encoding)
                self.buffers[uri] = (after, 1)
                open_doc(self.client, uri, after, version=1)

    def type(self, rel: str, text: str) -> None:
        """The person edits the buffer (a whole-text didChange), without saving."""
        uri = file_uri(self.root, rel)
        version = self.buffers[uri][1] + 1
        self.buffers[uri] = (text, version)
        replace_all(self.client, uri, text, version=version)

    def save(self, rel: str) -> None:
        uri = file_uri(self.root, rel)
        (self.root / rel).write_text(self.buffers[uri][0])
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))

