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
"""

from __future__ import annotations

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


@pytest.fixture(params=[False, True], ids=["plain-changes", "versioned"])
def world(request: pytest.FixtureRequest, tmp_path: Path, user_config_home: Path) -> Iterator[World]:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text(ORIGINAL)
    store = PatchStore(root, state_dir(root), policy=PathPolicy(root))
    patch = store.stage(DIFF)
    editor = Editor(versioned=request.param)
    # A server that waits for the editor's buffer: 5 s × 0.2.
    server = RawServer(root, server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.2"), on_request=editor.on_request)
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
    world: World, story: Callable[[World], None], version: int, knowable: bool
) -> None:
    world.editor.buffers[world.uri] = [TYPED, version]  # what the person sees
    story(world)
    reply = world.server.answer(world.accept(0))
    assert "result" in reply, reply
    result = reply["result"]
    final = world.editor.text(world.uri)
    assert final in (TYPED, WITH_A), f"the person's buffer was clobbered:\n{final}"
    assert result["applied"] is (final == WITH_A), result
    assert (world.status(0) == "accepted") is result["applied"]  # recorded only when applied
    if knowable:
        assert result["applied"] is True, result
    elif not result["applied"]:
        assert world.editor.edits_received == 0 or world.editor.versioned, "an edit sent against a buffer the server cannot know"
        assert "buffer" in result["message"], result
    assert (world.root / "app.py").read_text() == ORIGINAL  # the server never writes the file itself


def test_never_clobber_with_two_quick_accepts_of_one_hunk(world: World) -> None:
    """Two clicks on Accept before the editor answered the first edit."""
    world.editor.buffers[world.uri] = [TYPED, 2]
    world.open(TYPED, version=2)
    world.editor.hold = True
    first = world.accept(0)
    assert world.editor.wait_held(1)
    second = world.accept(0)
    world.editor.wait_held(2, timeout=2)  # an unserialised server sends the second edit at once
    world.editor.release()
    world.editor.hold = False
    replies = [world.server.answer(first), world.server.answer(second)]
    if world.editor.held:  # a serialised server sends nothing more for an accepted hunk; release anyway
        world.editor.release()
    assert world.editor.text(world.uri) == WITH_A, world.editor.text(world.uri)
    applied = [r["result"]["applied"] for r in replies if "result" in r]
    assert applied.count(True) == 1, replies
    assert world.status(0) == "accepted"


def test_never_clobber_when_the_editor_sends_the_buffer_back_late(world: World) -> None:
    """The editor answers `applied: true` but sends its didChange only later: the next
    accept in that file must not be computed against the text before the first."""
    world.editor.buffers[world.uri] = [TYPED, 2]
    world.open(TYPED, version=2)
    world.editor.send_back = False
    assert world.server.answer(world.accept(0))["result"]["applied"] is True
    world.editor.send_back = True
    second = world.accept(1)
    late = threading.Timer(0.3, world.editor.send_back_now, args=(world.uri,))  # the late didChange
    late.start()
    reply = world.server.answer(second)
    late.join()
    final = world.editor.text(world.uri)
    assert final in (WITH_A, WITH_BOTH), f"the person's buffer was clobbered:\n{final}"
    assert reply["result"]["applied"] is (final == WITH_BOTH), reply
    # Once the buffer came back, accepting again applies exactly.
    if final == WITH_A:
        again = world.server.answer(world.accept(1))["result"]
        assert again["applied"] is True, again
        assert world.editor.text(world.uri) == WITH_BOTH


def test_never_clobber_when_the_editor_never_sends_the_buffer_back(world: World) -> None:
    world.editor.buffers[world.uri] = [TYPED, 2]
    world.open(TYPED, version=2)
    world.editor.send_back = False
    assert world.server.answer(world.accept(0))["result"]["applied"] is True
    reply = world.server.answer(world.accept(1))["result"]
    final = world.editor.text(world.uri)
    assert final in (WITH_A, WITH_BOTH), f"the person's buffer was clobbered:\n{final}"
    assert reply["applied"] is (final == WITH_BOTH), reply
    if not reply["applied"]:
        assert "buffer" in reply["message"], reply
