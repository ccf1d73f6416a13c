"""Never clobber what the person typed, whatever the editor's document sync does.

The real server process over raw JSON-RPC, with an "editor" that holds the true
buffer (what the person sees) and applies every `workspace/applyEdit` it is sent
to that buffer — plain `changes` (no version check, as a client without
`documentChanges` applies them) or versioned `documentChanges` (refused when the
version differs, as VS Code does). The editor then lies or stumbles in its
document sync: changes before `didOpen`, changes the server cannot read, ranges
past the end, versions going backwards, applies answered before the buffer is
sent back, two clicks on Accept. After each, a staged hunk is accepted: the true
buffer must end either untouched or exactly the person's text plus the hunk.

One server per client kind serves the module (`Shared`, as the races, late-apply and
versions files do): each test stages its patch on a file of its own (`app<N>.py`) with an
editor of its own, so no test sees another's buffer, patch, versions or messages, and the
server must still answer after each test's mischief and exit cleanly at the end.
"""

from __future__ import annotations

import itertools
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import editor_apply
from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.workspace import state_dir

from raw_client import NO_ANSWER, RawServer, capabilities, server_env

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 31))
# Two insertions: a hunk applied one line off (or twice) shows in the text.
DIFF = """--- a/app.py
+++ b/app.py
@@ -2,3 +2,4 @@
 line 2
+inserted A
 line 3
 line 4
@@ -19,3 +20,4 @@
 line 19
 line 20
+inserted B
 line 21
"""
TYPED_LINE = "# typed by the person\n"
QUEUED = "waits for the apply, reject or undo of it under way"  # the server's log line (buffer_sync.lock)
TYPED = TYPED_LINE + ORIGINAL  # the person's unsaved typing, at the top: every later line moves
WITH_A = TYPED.replace("line 2\n", "line 2\ninserted A\n")
WITH_B = TYPED.replace("line 20\n", "line 20\ninserted B\n")
WITH_BOTH = WITH_A.replace("line 20\n", "line 20\ninserted B\n")


class Editor:
    """The editor's true buffers; `workspace/applyEdit` is applied to them when answered."""

    def __init__(self, versioned: bool, hold: bool = False) -> None:
        self.versioned = versioned
        self.hold = hold  # keep applyEdit requests until `release` (else answer at once)
        self.send_back = True  # send the buffer back (didChange) after applying
        self.buffers: dict[str, list[Any]] = {}
        self.held: list[dict[str, Any]] = []
        self.edits_received = 0
        self.server: RawServer | None = None
        self._cond = threading.Condition()

    def on_request(self, message: dict[str, Any]) -> Any:
        if message["method"] != "workspace/applyEdit":
            return None
        with self._cond:
            self.edits_received += 1
            if self.hold:
                self.held.append(message)
                self._cond.notify_all()
                return NO_ANSWER
        return self._apply(message)

    def wait_held(self, count: int, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.held) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def release(self) -> None:
        with self._cond:
            held, self.held = self.held, []
        for message in held:
            self.server.send({"jsonrpc": "2.0", "id": message["id"], "result": self._apply(message)})

    def _apply(self, message: dict[str, Any]) -> dict[str, Any]:
        edit = message["params"]["edit"]
        pairs = []
        if edit.get("documentChanges") is not None:
            for change in edit["documentChanges"]:
                uri, version = change["textDocument"]["uri"], change["textDocument"]["version"]
                if version is not None and uri in self.buffers and self.buffers[uri][1] != version:
                    return {"applied": False, "failureReason": f"version {version} is not the buffer's {self.buffers[uri][1]}"}
                pairs.append((uri, change["edits"]))
        else:
            pairs = list((edit.get("changes") or {}).items())
        for uri, edits in pairs:
            text_edits = [
                types.TextEdit(
                    range=types.Range(start=types.Position(**e["range"]["start"]), end=types.Position(**e["range"]["end"])),
                    new_text=e["newText"],
                )
                for e in edits
            ]
            buffer = self.buffers[uri]
            buffer[0] = editor_apply(buffer[0], text_edits)
            buffer[1] += 1
            if self.send_back:
                self.send_back_now(uri)
        return {"applied": True}

    def send_back_now(self, uri: str) -> None:
        text, version = self.buffers[uri]
        self.server.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}
        )

    def text(self, uri: str) -> str:
        return self.buffers[uri][0]


@dataclass
class World:
    server: RawServer
    editor: Editor
    store: PatchStore
    patch_id: str
    hunks: list[str]
    uri: str
    root: Path
    name: str = "app.py"  # the file's name in `root`

    def accept(self, hunk: int) -> Any:
        return self.server.request(
            "workspace/executeCommand",
            {"command": names.CMD_ACCEPT_HUNK, "arguments": [{"patch_id": self.patch_id, "hunk_id": self.hunks[hunk]}]},
        )

    def open(self, text: str, version: int = 1) -> None:
        self.server.notify(
            "textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "python", "version": version, "text": text}}
        )

    def change(self, version: Any, *changes: dict[str, Any]) -> None:
        self.server.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": version}, "contentChanges": list(changes)})

    def status(self, hunk: int) -> str:
        return self.store.get(self.patch_id).hunk(self.hunks[hunk]).status


def capabilities_for(versioned: bool) -> dict[str, Any]:
    caps = capabilities()
    if not versioned:
        caps["workspace"]["workspaceEdit"] = {}  # no documentChanges: plain, unversioned `changes`
    return caps


@dataclass
class Shared:
    """A module's server for one client kind: each test gets a file of its own (`app<N>.py`,
    ORIGINAL on disk) with DIFF staged on it, and an editor of its own (`begin`)."""

    server: RawServer
    root: Path
    xdg: Path  # the server's user config: patches and sessions are sealed with its key
    versioned: bool
    numbers: Iterator[int]

    def begin(self, editor: Editor, monkeypatch: pytest.MonkeyPatch,
              session: bool = False) -> tuple[str, PatchStore, Any, str | None]:
        """A fresh file with DIFF staged on it (in a session of its own if `session`), served
        to `editor`: (its uri, the store, the patch, the session id)."""
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.xdg))
        name = f"app{next(self.numbers)}.py"
        (self.root / name).write_text(ORIGINAL)
        session_id = (SessionStore(state_dir(self.root)).create(self.root, prompt="a patch the person reviews").session_id
                      if session else None)
        store = PatchStore(self.root, state_dir(self.root), policy=PathPolicy(self.root))
        patch = store.stage(DIFF.replace("app.py", name), session_id=session_id)
        with self.server._cond:  # noqa: SLF001 - what the server said during earlier tests is theirs
            self.server.notifications.clear()
        editor.server = self.server
        self.server.on_request = editor.on_request
        return (self.root / name).as_uri(), store, patch, session_id

    def end(self) -> None:
        """The server still answers after the test (the old per-test server's clean exit)."""
        self.server.on_request = lambda message: None
        reply = self.server.call("deepseek/status", {})
        assert "result" in reply, (reply, self.server.stderr()[-3000:])


def shared_server(tmp: Path, versioned: bool, **env: str) -> Iterator[Shared]:
    """One server for a module's tests (`Shared`), on a git workspace under `tmp`, shut down
    cleanly (exit code 0) at the end."""
    root = tmp / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    server = RawServer(root, server_env(tmp, **env))
    try:
        server.initialize(capabilities_for(versioned))
        yield Shared(server, root, tmp / "xdg-config", versioned, itertools.count(1))
        assert server.close() == 0, server.stderr()[-3000:]
    finally:
        server.kill()


# A server that waits for the editor's buffer: 5 s × 0.2.
WAIT_SCALE = "0.2"


@pytest.fixture(scope="module", params=[False, True], ids=["plain-changes", "versioned"])
def module_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    yield from shared_server(tmp_path_factory.mktemp("hostile-buffers"), request.param,
                             DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE=WAIT_SCALE)


@pytest.fixture
def shared_world(module_server: Shared, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """A `World` on the module's server: a file, patch and editor of this test's own."""
    shared = module_server
    editor = Editor(versioned=shared.versioned)
    uri, store, patch, _ = shared.begin(editor, monkeypatch)
    yield World(shared.server, editor, store, patch.patch_id, [h.hunk_id for h in patch.hunks], uri, shared.root,
                uri.rsplit("/", 1)[1])
    shared.end()


@pytest.fixture(params=[False, True], ids=["plain-changes", "versioned"])
def world(request: pytest.FixtureRequest, tmp_path: Path, user_config_home: Path) -> Iterator[World]:
    """A server of the test's own (for tests whose commands reach the whole workspace, as an undo)."""
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text(ORIGINAL)
    store = PatchStore(root, state_dir(root), policy=PathPolicy(root))
    patch = store.stage(DIFF)
    editor = Editor(versioned=request.param)
    server = RawServer(root, server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE=WAIT_SCALE), on_request=editor.on_request)
    editor.server = server
    server.initialize(capabilities_for(request.param))
    uri = (root / "app.py").as_uri()
    yield World(server, editor, store, patch.patch_id, [h.hunk_id for h in patch.hunks], uri, root)
    code = server.close()
    assert code == 0, server.stderr()[-3000:]


def insert_at(line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


# Each sync story: what the editor sends (its true buffer ends as TYPED, version 2 unless said).
def change_before_open(w: World) -> None:
    w.change(2, {"text": TYPED})  # never opened: the server has only the disk


def undecodable_change(w: World) -> None:
    w.open(ORIGINAL)
    w.change(2, insert_at(0, -1, TYPED_LINE))  # character -1: dropped by the transport


def too_deep_change(w: World) -> None:
    w.open(ORIGINAL)
    nested: Any = []
    for _ in range(70):  # deeper than the transport's 64 levels: dropped
        nested = [nested]
    w.change(2, {**insert_at(0, 0, TYPED_LINE), "note": nested})


def surrogate_change(w: World) -> None:
    w.open(ORIGINAL)
    w.change(2, {**insert_at(0, 0, TYPED_LINE), "note": "\ud800"})  # an unpaired surrogate: dropped


def string_version(w: World) -> None:
    w.open(ORIGINAL)
    w.change("2", insert_at(0, 0, TYPED_LINE))  # a version that is not an integer: dropped


def range_past_the_end(w: World) -> None:
    w.open(ORIGINAL)
    w.change(2, insert_at(999, 0, TYPED_LINE))  # the editor typed at the top but says line 999


def reversed_range(w: World) -> None:
    w.open(ORIGINAL)
    w.change(2, {"range": {"start": {"line": 5, "character": 0}, "end": {"line": 0, "character": 0}}, "text": TYPED_LINE})


def version_backwards(w: World) -> None:
    w.open(ORIGINAL, version=7)
    w.change(3, insert_at(0, 0, TYPED_LINE))  # 3 after 7: versions no longer name texts


def version_repeated(w: World) -> None:
    w.open(ORIGINAL, version=1)
    w.change(2, insert_at(0, 0, "# draft\n"))
    w.change(2, {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "text": TYPED_LINE})


def opened_twice(w: World) -> None:
    w.open(ORIGINAL, version=1)
    w.open(TYPED, version=2)  # the second open says what the buffer holds


def close_unknown_then_open(w: World) -> None:
    w.server.notify("textDocument/didClose", {"textDocument": {"uri": w.uri + ".unknown"}})
    w.open(TYPED, version=2)


def undecodable_then_whole_text(w: World) -> None:
    w.open(ORIGINAL)
    w.change(2, insert_at(0, -1, "junk"))
    w.change(3, {"text": TYPED})  # a whole-text change says what the buffer holds again


def change_before_open_then_open(w: World) -> None:
    w.change(2, {"text": "whatever\n"})
    w.open(TYPED, version=3)


# (story, the editor's version afterwards, whether the server can know the buffer)
STORIES = [
    pytest.param(change_before_open, 2, False, id="change-before-open"),
    pytest.param(undecodable_change, 2, False, id="undecodable-change"),
    pytest.param(too_deep_change, 2, False, id="too-deep-change"),
    pytest.param(surrogate_change, 2, False, id="unpaired-surrogate-change"),
    pytest.param(string_version, 2, False, id="string-version"),
    pytest.param(range_past_the_end, 2, False, id="range-past-the-end"),
    pytest.param(reversed_range, 2, False, id="reversed-range"),
    # Versions that do not increase: the versions no longer name one text (more in
    # test_hostile_editor_versions.py).
    pytest.param(version_backwards, 3, False, id="version-backwards"),
    pytest.param(version_repeated, 2, False, id="version-repeated"),
    pytest.param(opened_twice, 2, True, id="opened-twice"),
    pytest.param(close_unknown_then_open, 2, True, id="close-unknown-then-open"),
    pytest.param(undecodable_then_whole_text, 3, True, id="resynced-by-whole-text"),
    pytest.param(change_before_open_then_open, 3, True, id="resynced-by-open"),
]


@pytest.mark.parametrize(("story", "version", "knowable"), STORIES)
def test_never_clobber_after_a_broken_document_sync(
    shared_world: World, story: Callable[[World], None], version: int, knowable: bool
) -> None:
    shared_world.editor.buffers[shared_world.uri] = [TYPED, version]  # what the person sees
    story(shared_world)
    reply = shared_world.server.answer(shared_world.accept(0))
    assert "result" in reply, reply
    result = reply["result"]
    final = shared_world.editor.text(shared_world.uri)
    assert final in (TYPED, WITH_A), f"the person's buffer was clobbered:\n{final}"
    assert result["applied"] is (final == WITH_A), result
    assert (shared_world.status(0) == "accepted") is result["applied"]  # recorded only when applied
    if knowable:
        assert result["applied"] is True, result
    elif not result["applied"]:
        assert shared_world.editor.edits_received == 0 or shared_world.editor.versioned, "an edit sent against a buffer the server cannot know"
        assert "buffer" in result["message"], result
    assert (shared_world.root / shared_world.name).read_text() == ORIGINAL  # the server never writes the file itself


def test_never_clobber_with_two_quick_accepts_of_one_hunk(shared_world: World) -> None:
    """Two clicks on Accept before the editor answered the first edit."""
    shared_world.editor.buffers[shared_world.uri] = [TYPED, 2]
    shared_world.open(TYPED, version=2)
    shared_world.editor.hold = True
    errors = len(shared_world.server.stderr())
    first = shared_world.accept(0)
    assert shared_world.editor.wait_held(1)
    second = shared_world.accept(0)
    # A serialised server logs that the second accept waits for the first; an unserialised one
    # sends the second edit at once (held too, so both are computed against the same text).
    shared_world.server.wait(lambda: QUEUED in shared_world.server.stderr()[errors:] or len(shared_world.editor.held) > 1)
    shared_world.editor.release()
    shared_world.editor.hold = False
    replies = [shared_world.server.answer(first), shared_world.server.answer(second)]
    if shared_world.editor.held:  # a serialised server sends nothing more for an accepted hunk; release anyway
        shared_world.editor.release()
    assert shared_world.editor.text(shared_world.uri) == WITH_A, shared_world.editor.text(shared_world.uri)
    applied = [r["result"]["applied"] for r in replies if "result" in r]
    assert applied.count(True) == 1, replies
    assert shared_world.status(0) == "accepted"


def test_never_clobber_when_the_editor_sends_the_buffer_back_late(shared_world: World) -> None:
    """The editor answers `applied: true` but sends its didChange only later: the next
    accept in that file must not be computed against the text before the first."""
    shared_world.editor.buffers[shared_world.uri] = [TYPED, 2]
    shared_world.open(TYPED, version=2)
    shared_world.editor.send_back = False
    assert shared_world.server.answer(shared_world.accept(0))["result"]["applied"] is True
    shared_world.editor.send_back = True
    second = shared_world.accept(1)
    late = threading.Timer(0.3, shared_world.editor.send_back_now, args=(shared_world.uri,))  # the late didChange
    late.start()
    reply = shared_world.server.answer(second)
    late.join()
    final = shared_world.editor.text(shared_world.uri)
    assert final in (WITH_A, WITH_BOTH), f"the person's buffer was clobbered:\n{final}"
    assert reply["result"]["applied"] is (final == WITH_BOTH), reply
    # Once the buffer came back, accepting again applies exactly.
    if final == WITH_A:
        again = shared_world.server.answer(shared_world.accept(1))["result"]
        assert again["applied"] is True, again
        assert shared_world.editor.text(shared_world.uri) == WITH_BOTH


def test_never_clobber_when_the_editor_never_sends_the_buffer_back(shared_world: World) -> None:
    shared_world.editor.buffers[shared_world.uri] = [TYPED, 2]
    shared_world.open(TYPED, version=2)
    shared_world.editor.send_back = False
    assert shared_world.server.answer(shared_world.accept(0))["result"]["applied"] is True
    reply = shared_world.server.answer(shared_world.accept(1))["result"]
    final = shared_world.editor.text(shared_world.uri)
    assert final in (WITH_A, WITH_BOTH), f"the person's buffer was clobbered:\n{final}"
    assert reply["applied"] is (final == WITH_BOTH), reply
    if not reply["applied"]:
        assert "buffer" in reply["message"], reply
