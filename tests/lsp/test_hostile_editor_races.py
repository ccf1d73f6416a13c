"""Never clobber, and never answer one thing while doing another, when the person's
commands race each other and the editor is slow to answer the server's edit.

An Accept sends `workspace/applyEdit` and waits for the editor; a Reject of the same hunk
(or file, or everything) sent right behind it must not be answered `rejected` while the
editor may still apply the hunk. Whichever wins, the answer to each command, the hunk's
status, the session's event log and the text in the editor's buffer all say the same.
The real server process over raw JSON-RPC; the editor of `test_hostile_editor_buffers.py`
holds the applyEdit until the test answers it (applied, refused, or a JSON-RPC error).
One server per client kind serves the module; each test races on a file, patch, session
and editor of its own (`Shared` in `test_hostile_editor_buffers.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, WITH_A, WITH_B, WITH_BOTH, Editor, Shared, shared_server

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore

from raw_client import RawServer

TEXT_WITH = {frozenset(): TYPED, frozenset({0}): WITH_A, frozenset({1}): WITH_B, frozenset({0, 1}): WITH_BOTH}


@dataclass
class Race:
    server: RawServer
    editor: Editor
    store: PatchStore
    session_id: str
    patch_id: str
    hunks: list[str]
    uri: str
    root: Path
    name: str = "app.py"  # the file's name in `root`

    def command(self, name: str, **args: Any) -> Any:
        return self.server.request("workspace/executeCommand", {"command": name, "arguments": [args]})

    def status(self) -> list[str]:
        patch = self.store.get(self.patch_id)
        return [patch.hunk(h).status for h in self.hunks]

    def events(self, kind: str) -> list[str]:
        """The hunk ids of every `kind` event in the session's log."""
        log = self.root / ".deepseek" / "sessions" / self.session_id / "events.jsonl"
        out: list[str] = []
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event["kind"] == kind:
                out.extend(event["payload"]["hunk_ids"])
        return out


def start_race(shared: Shared, monkeypatch: pytest.MonkeyPatch, editor_class: type[Editor] = Editor) -> Race:
    """A `Race` on the module's server: DIFF staged in a session on a file of the test's own,
    open in an editor (an `editor_class`) that holds every applyEdit, its buffer TYPED at version 2."""
    editor = editor_class(versioned=shared.versioned, hold=True)
    uri, store, patch, session_id = shared.begin(editor, monkeypatch, session=True)
    editor.buffers[uri] = [TYPED, 2]
    shared.server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 2, "text": TYPED}})
    return Race(shared.server, editor, store, session_id, patch.patch_id, [h.hunk_id for h in patch.hunks], uri,
                shared.root, uri.rsplit("/", 1)[1])


@pytest.fixture(scope="module", params=[False, True], ids=["plain-changes", "versioned"])
def module_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    yield from shared_server(tmp_path_factory.mktemp("hostile-races"), request.param)  # applyEdit waits 60 s


@pytest.fixture
def race(module_server: Shared, monkeypatch: pytest.MonkeyPatch) -> Iterator[Race]:
    yield start_race(module_server, monkeypatch)
    module_server.end()


# The person's commands, by hunk index (0, 1) or scope.
def accept_hunk(r: Race, i: int) -> Any:
    return r.command(names.CMD_ACCEPT_HUNK, patch_id=r.patch_id, hunk_id=r.hunks[i])


def reject_hunk(r: Race, i: int) -> Any:
    return r.command(names.CMD_REJECT_HUNK, patch_id=r.patch_id, hunk_id=r.hunks[i])


COMMANDS = {
    "acceptHunk0": lambda r: accept_hunk(r, 0),
    "acceptHunk1": lambda r: accept_hunk(r, 1),
    "rejectHunk0": lambda r: reject_hunk(r, 0),
    "rejectHunk1": lambda r: reject_hunk(r, 1),
    "acceptFile": lambda r: r.command(names.CMD_ACCEPT_FILE, patch_id=r.patch_id, uri=r.uri),
    "rejectFile": lambda r: r.command(names.CMD_REJECT_FILE, patch_id=r.patch_id, uri=r.uri),
    "acceptAll": lambda r: r.command(names.CMD_ACCEPT_ALL, patch_id=r.patch_id),
    "rejectAll": lambda r: r.command(names.CMD_REJECT_ALL, patch_id=r.patch_id),
}


def answer_apply(r: Race, message: dict[str, Any], how: str) -> None:
    """The editor's late answer to the held applyEdit."""
    if how == "applied":
        result = r.editor._apply(message)  # noqa: SLF001 - applies it to the buffer, sends it back
        assert result["applied"], result
        r.server.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    elif how == "refused":
        r.server.send({"jsonrpc": "2.0", "id": message["id"], "result": {"applied": False, "failureReason": "Escape"}})
    else:
        r.server.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": "the editor broke"}})


def claimed(name: str, reply: dict[str, Any], hunks: list[str]) -> tuple[set[int], set[int]]:
    """The hunks (by index) the answer to `name` says were accepted / rejected."""
    result = reply.get("result")
    if result is None:
        assert reply["error"]["code"] == -32803 and "already" in reply["error"]["message"], reply
        return set(), set()
    index = {h: i for i, h in enumerate(hunks)}
    if name.startswith("accept"):
        if name == "acceptAll":
            return {index[h] for h in result["applied"]}, set()
        return ({index[h] for h in result["hunk_ids"]} if result["applied"] else set()), set()
    return set(), {index[h] for h in (result["rejected"] if name == "rejectAll" else result["hunk_ids"])}


# (first, second, the editor's answer to the first edit, final statuses, edits sent): the
# second command is sent right behind the first, before the editor answers. Edits after the
# first are answered at once (applied).
RACES = [
    pytest.param("acceptHunk0", "rejectHunk0", "applied", ["accepted", "pending"], 1, id="accept-then-reject-applied"),
    pytest.param("acceptHunk0", "rejectHunk0", "refused", ["rejected", "pending"], 1, id="accept-then-reject-refused"),
    pytest.param("acceptHunk0", "rejectHunk0", "error", ["rejected", "pending"], 1, id="accept-then-reject-error"),
    pytest.param("rejectHunk0", "acceptHunk0", None, ["rejected", "pending"], 0, id="reject-then-accept"),
    pytest.param("acceptHunk0", "rejectFile", "applied", ["accepted", "rejected"], 1, id="accept-hunk-then-reject-file"),
    pytest.param("acceptHunk0", "rejectAll", "refused", ["rejected", "rejected"], 1, id="accept-hunk-then-reject-all-refused"),
    pytest.param("acceptFile", "rejectHunk1", "applied", ["accepted", "accepted"], 1, id="accept-file-then-reject-hunk"),
    pytest.param("acceptAll", "rejectAll", "applied", ["accepted", "accepted"], 1, id="accept-all-then-reject-all"),
    pytest.param("acceptAll", "rejectHunk0", "refused", ["rejected", "pending"], 1, id="accept-all-then-reject-hunk-refused"),
    pytest.param("rejectFile", "acceptAll", None, ["rejected", "rejected"], 0, id="reject-file-then-accept-all"),
    pytest.param("acceptHunk0", "acceptFile", "applied", ["accepted", "accepted"], 2, id="accept-hunk-then-accept-file"),
    pytest.param("acceptHunk0", "acceptAll", "refused", ["accepted", "accepted"], 2, id="accept-hunk-refused-then-accept-all"),
    pytest.param("acceptHunk1", "acceptHunk1", "applied", ["pending", "accepted"], 1, id="accept-twice"),
    pytest.param("rejectHunk1", "rejectHunk1", None, ["pending", "rejected"], 0, id="reject-twice"),
]


@pytest.mark.parametrize(("first", "second", "editor_answer", "statuses", "edits"), RACES)
def test_never_clobber_when_reject_races_accept(
    race: Race, first: str, second: str, editor_answer: str | None, statuses: list[str], edits: int
) -> None:
    first_id = COMMANDS[first](race)
    second_id = COMMANDS[second](race)  # not awaiting the first
    if editor_answer is not None:
        assert race.editor.wait_held(1), "the accept sent no edit"
        (held,) = race.editor.held
        race.editor.held.clear()
        race.editor.hold = False  # any later edit is applied at once
        answer_apply(race, held, editor_answer)
    replies = {first: race.server.answer(first_id), "second": race.server.answer(second_id)}
    assert race.editor.edits_received == edits, "an edit was sent for hunks already settled, or none was"

    accepted: set[int] = set()
    rejected: set[int] = set()
    for name, reply in ((first, replies[first]), (second, replies["second"])):
        a, r = claimed(name, reply, race.hunks)
        assert not (a & accepted or a & rejected or r & accepted or r & rejected), (
            f"two answers claim one hunk: {replies}")
        accepted |= a
        rejected |= r
    # The answers, the store, the event log and the buffer agree.
    assert race.status() == ["accepted" if i in accepted else "rejected" if i in rejected else "pending"
                             for i in range(len(race.hunks))], (race.status(), replies)
    assert race.status() == statuses, replies
    assert sorted(race.events("PatchApplied@v1")) == sorted(race.hunks[i] for i in accepted)
    assert sorted(race.events("PatchRejected@v1")) == sorted(race.hunks[i] for i in rejected)
    assert race.editor.text(race.uri) == TEXT_WITH[frozenset(accepted)], race.editor.text(race.uri)
    assert (race.root / race.name).read_text() == ORIGINAL


# -- odd answers to the held edit ------------------------------------------------------------


def resend_buffer(r: Race) -> None:
    """The editor sends its whole buffer with a new version (as after a reload)."""
    r.editor.buffers[r.uri][1] += 1
    r.editor.send_back_now(r.uri)


@pytest.mark.parametrize("answer", [
    pytest.param({"applied": True, "failureReason": "change 0 could not be applied"}, id="failure-reason"),
    pytest.param({"applied": True, "failedChange": 0}, id="failed-change"),
])
@pytest.mark.parametrize("editor_applied", [True, False], ids=["it-applied", "it-did-not"])
def test_never_clobber_when_the_editor_answers_applied_and_failed(
    race: Race, answer: dict[str, Any], editor_applied: bool
) -> None:
    """`applied: true` that also names a failure: the server cannot tell what the buffer holds,
    so it records nothing and says so; accepting again gives the hunk exactly once."""
    accepting = accept_hunk(race, 0)
    assert race.editor.wait_held(1)
    (held,) = race.editor.held
    race.editor.held.clear()
    race.editor.hold = False
    if editor_applied:
        race.editor._apply(held)  # noqa: SLF001 - applied to the buffer and sent back
    race.server.send({"jsonrpc": "2.0", "id": held["id"], "result": answer})
    result = race.server.answer(accepting)["result"]
    assert result["applied"] is False and "failed" in result["message"], result
    assert race.status() == ["pending", "pending"] and race.events("PatchApplied@v1") == []
    if not editor_applied:
        resend_buffer(race)  # the editor's buffer, unchanged, says so
    again = race.server.answer(accept_hunk(race, 0))["result"]
    assert again["applied"] is True, again
    assert race.editor.text(race.uri) == WITH_A, race.editor.text(race.uri)  # once, in its place
    assert race.status() == ["accepted", "pending"] and race.events("PatchApplied@v1") == [race.hunks[0]]


@pytest.mark.parametrize(("first_answer", "second_answer"), [
    pytest.param(True, False, id="applied-then-refused"),
    pytest.param(False, True, id="refused-then-applied"),
])
def test_always_answers_when_the_editor_answers_an_edit_twice(race: Race, first_answer: bool, second_answer: bool) -> None:
    """The first answer counts; the second (to a request no longer waiting) changes nothing."""
    accepting = accept_hunk(race, 0)
    assert race.editor.wait_held(1)
    (held,) = race.editor.held
    race.editor.held.clear()
    race.editor.hold = False
    if first_answer:
        race.editor._apply(held)  # noqa: SLF001
    race.server.send({"jsonrpc": "2.0", "id": held["id"], "result": {"applied": first_answer}})
    race.server.send({"jsonrpc": "2.0", "id": held["id"], "result": {"applied": second_answer}})
    result = race.server.answer(accepting)["result"]
    assert result["applied"] is first_answer, result
    assert "result" in race.server.call("deepseek/status", {})  # still serving after the stray answer
    assert race.status()[0] == ("accepted" if first_answer else "pending")
    assert race.events("PatchApplied@v1") == ([race.hunks[0]] if first_answer else [])
    assert race.editor.text(race.uri) == (WITH_A if first_answer else TYPED)
    again = race.server.answer(accept_hunk(race, 1))["result"]
    assert again["applied"] is True, again
    assert race.editor.text(race.uri) == (WITH_BOTH if first_answer else WITH_B)


def test_never_clobber_when_the_file_is_closed_while_the_edit_is_out(race: Race) -> None:
    """The person closes the buffer (unsaved) while the editor holds the edit, and the editor
    then says it applied it: recorded as the editor says, the disk never written by the server,
    and the next accept is computed from what the editor opens again, not from a guess."""
    accepting = accept_hunk(race, 0)
    assert race.editor.wait_held(1)
    (held,) = race.editor.held
    race.editor.held.clear()
    race.editor.hold = False
    race.editor.send_back = False
    race.editor._apply(held)  # noqa: SLF001 - applied to the closing buffer
    race.server.notify("textDocument/didClose", {"textDocument": {"uri": race.uri}})
    race.server.send({"jsonrpc": "2.0", "id": held["id"], "result": {"applied": True}})
    assert race.server.answer(accepting)["result"]["applied"] is True
    assert race.status()[0] == "accepted"
    assert (race.root / race.name).read_text() == ORIGINAL  # the server never writes the file
    # The file is opened again from the disk (the unsaved edit is gone with the buffer).
    race.editor.send_back = True
    race.editor.buffers[race.uri] = [ORIGINAL, 1]
    race.server.notify("textDocument/didOpen", {"textDocument": {"uri": race.uri, "languageId": "python", "version": 1, "text": ORIGINAL}})
    again = race.server.answer(accept_hunk(race, 1))["result"]
    assert again["applied"] is True, again
    assert race.editor.text(race.uri) == ORIGINAL.replace("line 20\n", "line 20\ninserted B\n")
