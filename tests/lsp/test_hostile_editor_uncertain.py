"""Never clobber after an unanswered edit when the person types before the editor says anything.

An Accept's `workspace/applyEdit` gets no answer in time (or a malformed one); the person then
types, and the editor sends that typing as plain incremental changes. The server cannot tell
from such a change whether the unanswered edit is in the buffer: a plain-`changes` client that
applies it late applies its ranges (computed for the text before the typing) to the typed text,
so the hunk lands on the wrong lines. Taking that change as the buffer's truth (the old
behaviour) let the next Accept send the hunk again: twice in the buffer, and the server's idea
of the hunk (pending) and of the buffer drifted apart.

Now the buffer is *uncertain*: every accept of that file is refused (nothing sent, nothing
recorded), telling the person to check the buffer and reopen the file, until the editor sends
its whole text (`didOpen`, a whole-text change). Only what settles it lifts it: the server's copy
becoming exactly the edit's result (it landed as sent), or, for a versioned client, a change to a
later version (a versioned edit cannot apply any more).

The real server over raw JSON-RPC; the editor of `test_hostile_editor_buffers.py`, sending
incremental changes, for a plain-`changes` client and a versioned `documentChanges` one, one
server for each serving the module (a file, patch, session and editor per test).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lsp_harness import editor_apply
from lsprotocol import types
from test_hostile_editor_buffers import ORIGINAL, Editor, Shared, shared_server
from test_hostile_editor_races import Race, accept_hunk, reject_hunk, start_race

from deepseek_ls.lsp import names

# applyEdit waits 60 s × 0.05 = 3 s.
SCALE = "0.05"
MORE = "# more typing\n"  # what the person types after the unanswered edit, at the top


class TypingEditor(Editor):
    """Sends what changes in its buffers as incremental `didChange`s, as Neovim and VS Code do."""

    def type_at_top(self, uri: str, text: str) -> None:
        buffer = self.buffers[uri]
        buffer[0] = text + buffer[0]
        buffer[1] += 1
        at = {"line": 0, "character": 0}
        self.server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": buffer[1]},
                                                      "contentChanges": [{"range": {"start": at, "end": at}, "text": text}]})

    def apply_late(self, held: dict[str, Any]) -> bool:
        """Apply a held edit now, as the editor would have, and send it as incremental changes."""
        edit = held["params"]["edit"]
        if edit.get("documentChanges") is not None:
            pairs = []
            for change in edit["documentChanges"]:
                uri, version = change["textDocument"]["uri"], change["textDocument"]["version"]
                if version is not None and self.buffers[uri][1] != version:
                    return False  # the buffer moved on: a versioned edit is refused
                pairs.append((uri, change["edits"]))
        else:
            pairs = list(edit["changes"].items())
        for uri, edits in pairs:
            buffer = self.buffers[uri]
            text_edits = [types.TextEdit(range=types.Range(start=types.Position(**e["range"]["start"]),
                                                           end=types.Position(**e["range"]["end"])), new_text=e["newText"])
                          for e in edits]
            buffer[0] = editor_apply(buffer[0], text_edits)
            buffer[1] += 1
            # Bottom-up, so each change's range is still right after the ones before it.
            ordered = sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                             reverse=True)
            self.server.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": buffer[1]},
                "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in ordered]})
        return True


@pytest.fixture(scope="module", params=[False, True], ids=["plain-changes", "versioned"])
def module_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    yield from shared_server(tmp_path_factory.mktemp("hostile-uncertain"), request.param,
                             DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE=SCALE)


@pytest.fixture
def race(module_server: Shared, monkeypatch: pytest.MonkeyPatch) -> Iterator[Race]:
    """A race on the module's server with a typing editor (`test_hostile_editor_races.start_race`)."""
    yield start_race(module_server, monkeypatch, TypingEditor)
    module_server.end()


def unanswered_accept(r: Race, how: str) -> dict[str, Any]:
    """Accept hunk A; the editor holds the edit and answers it `how` (timeout: never)."""
    accepting = accept_hunk(r, 0)
    assert r.editor.wait_held(1), "the accept sent no edit"
    (held,) = r.editor.held
    r.editor.held.clear()
    r.editor.hold = False  # later edits are applied at once (and sent back whole)
    if how == "malformed-null":
        r.server.send({"jsonrpc": "2.0", "id": held["id"], "result": None})
    result = r.server.answer(accepting, timeout=60)["result"]
    assert result["applied"] is False and r.status() == ["pending", "pending"], result
    return held


def a_count(r: Race) -> int:
    return r.editor.text(r.uri).count("inserted A\n")


def a_in_place(r: Race) -> bool:
    return "line 2\ninserted A\nline 3\n" in r.editor.text(r.uri)


def refused_uncertain(result: dict[str, Any]) -> bool:
    message = result["message"]
    return result["applied"] is False and "check the buffer" in message and "reopen the file" in message


def plain(r: Race) -> bool:
    return not r.editor.versioned


# Stories after the unanswered edit and the person's typing. Each returns nothing; the test
# checks, per client, that the hunk is never in the buffer twice and never recorded on a guess.


def late_apply_then_accept(r: Race, held: dict[str, Any]) -> None:
    """The editor applies the held edit late, on top of the typing; then the person accepts again."""
    landed = r.editor.apply_late(held)
    assert landed is plain(r)  # a versioned client refuses an edit for an older version
    if plain(r):
        assert a_count(r) == 1 and not a_in_place(r)  # the plain edit's ranges named the old lines
    result = r.server.answer(accept_hunk(r, 0))["result"]
    if plain(r):
        assert refused_uncertain(result), result  # the bug: applied again, A twice
        assert r.editor.edits_received == 1 and a_count(r) == 1 and r.status() == ["pending", "pending"]
    else:
        assert result["applied"] is True and a_count(r) == 1 and a_in_place(r), result
        assert r.status() == ["accepted", "pending"]


def accept_then_late_apply(r: Race, held: dict[str, Any]) -> None:
    """The person accepts again before the editor got round to the held edit, which lands after."""
    result = r.server.answer(accept_hunk(r, 0))["result"]
    if plain(r):
        assert refused_uncertain(result), result
        assert r.editor.edits_received == 1
    else:
        assert result["applied"] is True and r.status() == ["accepted", "pending"], result
    r.editor.apply_late(held)
    assert a_count(r) == 1, r.editor.text(r.uri)  # the bug: the old edit landed on top of the new one
    if plain(r):
        assert r.status() == ["pending", "pending"]


def reopen(r: Race) -> None:
    r.server.notify("textDocument/didClose", {"textDocument": {"uri": r.uri}})
    r.editor.buffers[r.uri][1] = 1
    r.server.notify("textDocument/didOpen", {"textDocument": {"uri": r.uri, "languageId": "python", "version": 1,
                                                              "text": r.editor.text(r.uri)}})


def whole_text(r: Race) -> None:
    r.editor.buffers[r.uri][1] += 1
    r.editor.send_back_now(r.uri)


def refused_until(resync: Callable[[Race], None]) -> Callable[[Race, dict[str, Any]], None]:
    def story(r: Race, held: dict[str, Any]) -> None:
        """Never applied: refused (plain) while uncertain, even after more typing; once the
        editor sends its whole text, Accept gives the hunk once, in its place."""
        for _ in range(2):
            result = r.server.answer(accept_hunk(r, 0))["result"]
            if not plain(r):
                break
            assert refused_uncertain(result), result
            r.editor.type_at_top(r.uri, "# and more\n")  # still plain changes: still uncertain
        if plain(r):
            assert r.editor.edits_received == 1 and r.status() == ["pending", "pending"]
            resync(r)
            result = r.server.answer(accept_hunk(r, 0))["result"]
        assert result["applied"] is True and a_count(r) == 1 and a_in_place(r), result
        assert r.status() == ["accepted", "pending"]
    return story


STORIES = [
    pytest.param("timeout", late_apply_then_accept, id="timeout-typed-late-apply-then-accept"),
    pytest.param("malformed-null", late_apply_then_accept, id="malformed-typed-late-apply-then-accept"),
    pytest.param("malformed-null", accept_then_late_apply, id="malformed-typed-accept-then-late-apply"),
    pytest.param("malformed-null", refused_until(reopen), id="malformed-typed-refused-until-reopen"),
    pytest.param("malformed-null", refused_until(whole_text), id="malformed-typed-refused-until-whole-text"),
]


@pytest.mark.parametrize(("how", "story"), STORIES)
def test_never_clobber_when_the_person_types_after_an_unanswered_edit(race: Race, how: str, story) -> None:
    held = unanswered_accept(race, how)
    race.editor.type_at_top(race.uri, MORE)
    story(race, held)
    assert (race.root / race.name).read_text() == ORIGINAL  # the server never writes the file


def test_an_unanswered_edit_that_lands_as_sent_settles_the_buffer(race: Race) -> None:
    """The editor applies the held edit late on the untouched buffer (incremental): the server's
    copy is exactly the edit's result, so the typing after it is plain typing again, and the next
    Accept finds the hunk already there — once, in its place."""
    held = unanswered_accept(race, "malformed-null")
    assert race.editor.apply_late(held)
    race.editor.type_at_top(race.uri, MORE)
    result = race.server.answer(accept_hunk(race, 0))["result"]
    assert result["applied"] is True and a_count(race) == 1 and a_in_place(race), result
    assert race.status() == ["accepted", "pending"]


REJECTS = [
    pytest.param(lambda r: reject_hunk(r, 0), id="reject-the-hunk"),
    pytest.param(lambda r: r.command(names.CMD_REJECT_FILE, patch_id=r.patch_id, uri=r.uri), id="reject-the-file"),
    pytest.param(lambda r: r.command(names.CMD_REJECT_ALL, patch_id=r.patch_id), id="reject-all"),
]


@pytest.mark.parametrize("reject", REJECTS)
def test_never_clobber_a_reject_waits_while_an_unanswered_edit_may_still_land(race: Race, reject) -> None:
    """A Reject after an Accept whose edit got no usable answer: the editor may apply that edit yet,
    and the hunk, recorded rejected, would then sit in the buffer. Refused, nothing recorded, until
    the editor sends the buffer; then the Reject goes through."""
    unanswered_accept(race, "malformed-null")
    answer = race.server.answer(reject(race))
    assert "no usable answer" in answer.get("error", {}).get("message", ""), answer
    assert race.status() == ["pending", "pending"] and race.events("PatchRejected@v1") == []
    whole_text(race)  # the editor sends its buffer: the edit did not land
    answer = race.server.answer(reject(race))
    assert "error" not in answer, answer
    assert race.status()[0] == "rejected" and a_count(race) == 0
