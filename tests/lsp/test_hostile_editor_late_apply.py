"""Never clobber when the editor applies an edit late: an Accept's `workspace/applyEdit` gets
no answer in time, or an answer that says nothing (malformed), and the editor applies the edit
afterwards anyway. The server records nothing, and must not assume the edit was not applied:
the buffer's state is unknown until the editor sends it (`didChange` / `didOpen`). The next
Accept of that file waits for it (bounded) and then gives the hunk exactly once, or, if the
buffer never comes, refuses (nothing sent) until it does. An undo of the file waits the same way.

The real server process over raw JSON-RPC; the editor of `test_hostile_editor_buffers.py`
holds the applyEdit (as in `test_hostile_editor_races.py`), for a plain-`changes` client and
a versioned `documentChanges` one, one server for each serving the module's races (a file, patch,
session and editor per test). Its late `didChange` arrives once the next Accept is under way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, TYPED_LINE, WITH_A, Shared, World, shared_server, world  # noqa: F401
from test_hostile_editor_races import Race, accept_hunk, start_race
from test_hostile_editor_undo import cli

from deepseek_ls.lsp import names

from raw_client import encode

# applyEdit waits 60 s × 0.15 = 9 s; the next apply waits 5 s × 0.15 = 0.75 s for the buffer.
SCALE = "0.15"
WAITING = "document sync: waiting"  # the server's log line when an apply waits for a buffer


@pytest.fixture(scope="module", params=[False, True], ids=["plain-changes", "versioned"])
def module_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    yield from shared_server(tmp_path_factory.mktemp("hostile-late-apply"), request.param,
                             DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE=SCALE)


@pytest.fixture
def race(module_server: Shared, monkeypatch: pytest.MonkeyPatch) -> Iterator[Race]:
    """A race on the module's server (`test_hostile_editor_races.start_race`)."""
    yield start_race(module_server, monkeypatch)
    module_server.end()


# How the editor answers the first edit: None = not at all (the server's wait runs out).
def answer(r: Race, held: dict[str, Any], how: str | None) -> None:
    if how == "result-and-error":
        r.server.send_raw(encode({"jsonrpc": "2.0", "id": held["id"], "result": {"applied": True},
                                  "error": {"code": 1, "message": "x"}}))
    elif how is not None:
        r.server.send({"jsonrpc": "2.0", "id": held["id"], "result": ANSWERS[how]})


ANSWERS: dict[str, Any] = {"null": None, "empty-object": {}, "applied-string": {"applied": "yes"}, "number": 5}
REASONS = {None: "no answer within", "result-and-error": "malformed answer"} | {k: "malformed answer" for k in ANSWERS}


def first_accept_goes_unanswered(r: Race, how: str | None) -> dict[str, Any]:
    """Accept hunk 0; the editor holds the edit and answers it `how`; the Accept's result."""
    accepting = accept_hunk(r, 0)
    assert r.editor.wait_held(1), "the accept sent no edit"
    (held,) = r.editor.held
    r.editor.held.clear()
    r.editor.hold = False  # later edits are applied (and sent back) at once
    answer(r, held, how)
    result = r.server.answer(accepting, timeout=60)["result"]
    assert result["applied"] is False and REASONS[how] in result["message"], result
    assert r.status() == ["pending", "pending"] and r.events("PatchApplied@v1") == []  # nothing recorded
    return held


def assert_once(r: Race, again: dict[str, Any]) -> None:
    """Hunk 0 is in the buffer exactly once, in its place, and recorded accepted once."""
    assert r.editor.text(r.uri) == WITH_A, r.editor.text(r.uri)
    assert again["applied"] is True, again
    assert r.status() == ["accepted", "pending"] and r.events("PatchApplied@v1") == [r.hunks[0]]
    assert (r.root / r.name).read_text() == ORIGINAL  # the server never writes the file


LATE_APPLIES = [
    pytest.param(None, id="timeout-then-late-apply"),
    pytest.param("null", id="malformed-null-then-late-apply"),
    pytest.param("empty-object", id="malformed-empty-object-then-late-apply"),
    pytest.param("applied-string", id="malformed-applied-string-then-late-apply"),
    pytest.param("result-and-error", id="malformed-result-and-error-then-late-apply"),
]


@pytest.mark.parametrize("how", LATE_APPLIES)
def test_never_clobber_when_the_editor_applies_an_unanswered_edit_late(race: Race, how: str | None) -> None:
    """The editor applies the edit after the server gave up on its answer; its didChange comes
    only after the person clicked Accept again. That Accept waits for it, then finds the hunk
    already in the buffer: the hunk is there once, and recorded accepted."""
    held = first_accept_goes_unanswered(race, how)
    race.editor.send_back = False
    late = race.editor._apply(held)  # noqa: SLF001 - the late apply, its didChange not sent yet
    assert late["applied"], late
    if how is None:
        race.server.send({"jsonrpc": "2.0", "id": held["id"], "result": late})  # the late answer (dropped)
    race.editor.send_back = True
    waits = race.server.stderr().count(WAITING)
    accepting = accept_hunk(race, 0)
    # The late apply's didChange comes once the Accept is under way: the server waits for the
    # buffer (it logs so), or (the bug) it already sent an edit computed from the old text.
    race.server.wait(lambda: race.server.stderr().count(WAITING) > waits or race.editor.edits_received > 1)
    race.editor.send_back_now(race.uri)
    assert_once(race, race.server.answer(accepting)["result"])


def reopen(r: Race) -> None:
    r.server.notify("textDocument/didClose", {"textDocument": {"uri": r.uri}})
    r.editor.buffers[r.uri][1] = 1
    r.server.notify("textDocument/didOpen", {"textDocument": {"uri": r.uri, "languageId": "python", "version": 1,
                                                              "text": r.editor.text(r.uri)}})


def resend(r: Race) -> None:
    r.editor.buffers[r.uri][1] += 1
    r.editor.send_back_now(r.uri)  # whole text, new version


NEVER_APPLIED = [
    pytest.param(None, resend, id="timeout-never-applied-then-didChange"),
    pytest.param(None, reopen, id="timeout-never-applied-then-reopen"),
    pytest.param("null", resend, id="malformed-null-never-applied-then-didChange"),
]


@pytest.mark.parametrize(("how", "editor_sends"), NEVER_APPLIED)
def test_never_clobber_when_an_unanswered_edit_is_never_applied(race: Race, how: str | None, editor_sends) -> None:
    """The editor never applies the unanswered edit and sends nothing: the next Accept cannot
    know what the buffer holds, so it refuses clearly and sends nothing. Once the editor sends
    the buffer, Accept gives the hunk once."""
    first_accept_goes_unanswered(race, how)
    refused = race.server.answer(accept_hunk(race, 0))["result"]
    assert refused["applied"] is False and "cannot tell whether it applied" in refused["message"], refused
    assert race.editor.edits_received == 1, "an edit was computed on a guess"
    assert race.editor.text(race.uri) == TYPED and race.status() == ["pending", "pending"]
    editor_sends(race)
    assert_once(race, race.server.answer(accept_hunk(race, 0))["result"])


def test_never_clobber_undo_after_an_unanswered_accept_applied_late(world: World) -> None:
    """`deepseek.undo` (of a CLI apply of hunk B) after an Accept of hunk A whose edit the editor
    answered malformed, then applied late: the undo waits for the buffer, then takes only B out
    — A (once) and the person's typing stay, each line where it belongs."""
    applied = cli(world.root, "apply", world.patch_id, "--hunk", world.hunks[1], "--yes")
    assert applied.returncode == 0, applied.stderr
    with_b = (world.root / "app.py").read_text()
    world.editor.buffers[world.uri] = [TYPED_LINE + with_b, 2]
    world.open(TYPED_LINE + with_b, version=2)
    world.editor.hold = True
    accepting = world.accept(0)
    assert world.editor.wait_held(1)
    (held,) = world.editor.held
    world.editor.held.clear()
    world.editor.hold = False
    world.server.send({"jsonrpc": "2.0", "id": held["id"], "result": None})  # malformed
    assert world.server.answer(accepting)["result"]["applied"] is False
    world.editor.send_back = False
    assert world.editor._apply(held)["applied"]  # noqa: SLF001 - the late apply, its didChange not sent yet
    world.editor.send_back = True
    waits = world.server.stderr().count(WAITING)
    undoing = world.server.request("workspace/executeCommand", {"command": names.CMD_UNDO, "arguments": [{}]})
    world.server.wait(lambda: world.server.stderr().count(WAITING) > waits or world.editor.edits_received > 1)
    world.editor.send_back_now(world.uri)
    undone = world.server.answer(undoing)
    assert undone.get("result", {}).get("unsaved") == ["app.py"], undone
    assert world.editor.text(world.uri) == TYPED.replace("line 2\n", "line 2\ninserted A\n"), world.editor.text(world.uri)
    assert [world.status(0), world.status(1)] == ["pending", "pending"]  # A was never recorded; B undone
