"""Never clobber when the editor's document versions do not go up.

LSP says each change gives a document a higher version. An editor whose versions go
backwards or repeat (messages reordered, a counter restarted, a re-open without a close)
no longer names one text with one version: an incremental change may have been applied
out of order, and a versioned edit would match a buffer it was not made for. The server
then refuses applies to that buffer, saying why, until the editor says again what it
holds (a `didOpen` after a `didClose`, or a whole text with a version above every one
seen). The real server process over raw JSON-RPC, with the editor of
`test_hostile_editor_buffers.py` (plain `changes` and versioned `documentChanges`), one
server for each serving the module, a file, patch and editor per test (`shared_world`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, TYPED_LINE, WITH_A, World, insert_at, module_server, shared_world  # noqa: F401

DRAFT = "# draft\n"


def whole(text: str) -> dict[str, str]:
    return {"text": text}


def replace_first_line(text: str) -> dict:
    return {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "text": text}


# Each story ends with the editor's true buffer TYPED; it returns the last version the editor
# sent (which its buffer now has) and the highest.
def change_backwards(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=7)
    w.change(3, insert_at(0, 0, TYPED_LINE))
    return 3, 7


def change_repeated(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=1)
    w.change(2, insert_at(0, 0, DRAFT))
    w.change(2, replace_first_line(TYPED_LINE))
    return 2, 2


def change_at_the_open_version(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=4)
    w.change(4, insert_at(0, 0, TYPED_LINE))
    return 4, 4


def negative_version(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=1)
    w.change(-1, insert_at(0, 0, TYPED_LINE))
    return -1, 1


def whole_text_backwards(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=5)
    w.change(4, whole(TYPED))  # the whole text, but an older version: a late message, maybe
    return 4, 5


def reordered_changes(w: World) -> tuple[int, int]:
    """The editor typed the draft line (v2), then turned it into the typed line (v3); the
    two notifications arrive swapped. The server's copy is wrong (the typed line is replaced
    by the draft, which is how reordering shows); only the version says so."""
    w.open(ORIGINAL, version=1)
    w.change(3, replace_first_line(TYPED_LINE))  # v3 first: it replaces "line 1"
    w.change(2, insert_at(0, 0, DRAFT))  # then v2: the server's copy is now DRAFT + TYPED_LINE + ...
    return 2, 3


def backwards_then_forwards(w: World) -> tuple[int, int]:
    """Going up again after going backwards is not enough: incremental changes since
    may have been made against a text the server never had."""
    w.open(ORIGINAL, version=7)
    w.change(3, insert_at(0, 0, DRAFT))
    w.change(8, replace_first_line(TYPED_LINE))
    return 8, 8


def reopened_with_an_older_version(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=5)
    w.open(TYPED, version=3)  # a second didOpen, no didClose, an older version
    return 3, 5


def reopened_with_the_same_version(w: World) -> tuple[int, int]:
    w.open(ORIGINAL, version=5)
    w.open(TYPED, version=5)
    return 5, 5




# How the editor says again what the buffer holds (returns the buffer's version afterwards).
def close_and_open(w: World, highest: int) -> int:
    w.server.notify("textDocument/didClose", {"textDocument": {"uri": w.uri}})
    w.open(TYPED, version=1)  # versions start over after a close
    return 1


def whole_text_above_every_version(w: World, highest: int) -> int:
    w.change(highest + 1, whole(TYPED))
    return highest + 1


def open_above_every_version(w: World, highest: int) -> int:
    w.open(TYPED, version=highest + 1)
    return highest + 1


# (story, how the editor then resyncs): every story, each resync more than once.
BACKWARDS = [
    pytest.param(change_backwards, close_and_open, id="change-backwards"),
    pytest.param(change_repeated, whole_text_above_every_version, id="change-repeated"),
    pytest.param(change_at_the_open_version, open_above_every_version, id="change-at-the-open-version"),
    pytest.param(negative_version, whole_text_above_every_version, id="negative-version"),
    pytest.param(whole_text_backwards, whole_text_above_every_version, id="whole-text-backwards"),
    pytest.param(reordered_changes, close_and_open, id="reordered-changes"),
    pytest.param(backwards_then_forwards, open_above_every_version, id="backwards-then-forwards"),
    pytest.param(reopened_with_an_older_version, close_and_open, id="reopened-older-version"),
    pytest.param(reopened_with_the_same_version, whole_text_above_every_version, id="reopened-same-version"),
]


@pytest.mark.parametrize(("story", "resync"), BACKWARDS)
def test_never_clobber_when_document_versions_do_not_increase(
    shared_world: World, story: Callable[[World], tuple[int, int]], resync: Callable[[World, int], int]
) -> None:
    shared_world.editor.buffers[shared_world.uri] = [TYPED, 0]
    shared_world.editor.buffers[shared_world.uri][1], highest = story(shared_world)
    reply = shared_world.server.answer(shared_world.accept(0))
    result = reply["result"]
    assert result["applied"] is False, result
    assert "version" in result["message"] and "out of sync" in result["message"], result
    assert shared_world.editor.edits_received == 0, "an edit was sent for a buffer whose versions went backwards"
    assert shared_world.editor.text(shared_world.uri) == TYPED  # the person's text, untouched
    assert shared_world.status(0) == "pending"  # nothing recorded
    assert any(n["method"] == "window/showMessage" and "version" in n["params"]["message"]
               for n in shared_world.server.notifications), "the person was not told"
    hunks = shared_world.server.call("deepseek/hunks", {"uri": shared_world.uri})["result"]
    assert [h["status"] for h in hunks["hunks"]] == ["pending", "pending"]  # still offered

    # Once the editor says what it holds, with a version that names it, the accept goes through.
    shared_world.editor.buffers[shared_world.uri][1] = resync(shared_world, highest)
    again = shared_world.server.answer(shared_world.accept(0))["result"]
    assert again["applied"] is True, again
    assert shared_world.editor.text(shared_world.uri) == WITH_A
    assert shared_world.status(0) == "accepted"
    assert (shared_world.root / shared_world.name).read_text() == ORIGINAL  # the server never writes the file itself


# Versions that do go up: gaps, one version for several changes of one notification,
# a new count after a close. These must keep working.
def gaps(w: World) -> int:
    w.open(ORIGINAL, version=1)
    w.change(5, insert_at(0, 0, DRAFT))
    w.change(9, replace_first_line(TYPED_LINE))
    return 9


def several_changes_in_one_notification(w: World) -> int:
    w.open(ORIGINAL, version=1)
    w.change(2, insert_at(0, 0, DRAFT), replace_first_line(TYPED_LINE))
    return 2


def count_restarted_after_close(w: World) -> int:
    w.open(ORIGINAL, version=40)
    w.server.notify("textDocument/didClose", {"textDocument": {"uri": w.uri}})
    w.open(ORIGINAL, version=1)
    w.change(2, insert_at(0, 0, TYPED_LINE))
    return 2


@pytest.mark.parametrize("story", [
    pytest.param(gaps, id="gaps"),
    pytest.param(several_changes_in_one_notification, id="one-version-several-changes"),
    pytest.param(count_restarted_after_close, id="restarted-after-close"),
])
def test_versions_that_increase_keep_applying(shared_world: World, story: Callable[[World], int]) -> None:
    shared_world.editor.buffers[shared_world.uri] = [TYPED, 0]
    shared_world.editor.buffers[shared_world.uri][1] = story(shared_world)
    result = shared_world.server.answer(shared_world.accept(0))["result"]
    assert result["applied"] is True, result
    assert shared_world.editor.text(shared_world.uri) == WITH_A
    assert shared_world.status(0) == "accepted"
