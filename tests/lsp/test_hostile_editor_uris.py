"""Never clobber when the editor names one file by several URIs.

The server keys buffers by URI. An editor that opens a file under one spelling and changes
it under another (letter case, `./`, `//`, a path through a symlink to the workspace) is
describing one buffer the server holds under two names, or one it does not know it has.
The server's copy of the file is then not what the person sees: an edit computed from it
(or from the disk) must not be sent. Percent-encoding is the same name (pygls unquotes
URIs), and a buffer opened under another spelling that holds exactly the disk's text is
safe to edit. The real server process over raw JSON-RPC, with the editor of
`test_hostile_editor_buffers.py` (which applies every edit to the one buffer it has), one
server for each client kind serving the module, a file, patch and editor per test (`shared_world`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_hostile_editor_buffers import ORIGINAL, TYPED, TYPED_LINE, WITH_A, World, insert_at, module_server, shared_world  # noqa: F401


def upper_case(w: World) -> str:
    return w.uri.replace(f"/{w.name}", f"/{w.name.capitalize()}")


def dot_segment(w: World) -> str:
    return w.uri.replace(f"/{w.name}", f"/./{w.name}")


def double_slash(w: World) -> str:
    return w.uri.replace(f"/{w.name}", f"//{w.name}")


def through_a_symlink(w: World) -> str:
    link = w.root.parent / f"link-to-ws-for-{w.name}"
    link.symlink_to(w.root, target_is_directory=True)
    return (link / w.name).as_uri()


def percent_encoded(w: World) -> str:
    return w.uri.replace(f"/{w.name}", f"/%61{w.name[1:]}")  # the same URI once unquoted


def change_via_alias(w: World, alias: str) -> str:
    """Opened as the server names it, typed into under another name."""
    w.open(ORIGINAL, version=1)
    w.server.notify("textDocument/didChange", {"textDocument": {"uri": alias, "version": 2},
                                                 "contentChanges": [insert_at(0, 0, TYPED_LINE)]})
    return TYPED


def opened_via_alias(w: World, alias: str) -> str:
    """Only ever opened under another name, with unsaved typing."""
    w.server.notify("textDocument/didOpen", {"textDocument": {"uri": alias, "languageId": "python", "version": 1, "text": TYPED}})
    return TYPED


def opened_via_alias_clean(w: World, alias: str) -> str:
    """Opened under another name, holding what the disk holds."""
    w.server.notify("textDocument/didOpen", {"textDocument": {"uri": alias, "languageId": "python", "version": 1, "text": ORIGINAL}})
    return ORIGINAL


# (how the editor spells the URI, what it does, whether the accept may go through)
CASES = [
    pytest.param(upper_case, change_via_alias, False, id="case-change"),
    pytest.param(dot_segment, change_via_alias, False, id="dot-change"),
    pytest.param(double_slash, change_via_alias, False, id="double-slash-change"),
    pytest.param(through_a_symlink, change_via_alias, False, id="symlink-change"),
    pytest.param(percent_encoded, change_via_alias, True, id="percent-change"),
    pytest.param(dot_segment, opened_via_alias, False, id="dot-open"),
    pytest.param(through_a_symlink, opened_via_alias, False, id="symlink-open"),
    pytest.param(percent_encoded, opened_via_alias, True, id="percent-open"),
    pytest.param(through_a_symlink, opened_via_alias_clean, True, id="symlink-open-clean"),
    pytest.param(dot_segment, opened_via_alias_clean, True, id="dot-open-clean"),
]


@pytest.mark.parametrize(("spell", "story", "may_apply"), CASES)
def test_never_clobber_when_the_editor_spells_a_uri_another_way(
    shared_world: World, spell: Callable[[World], str], story: Callable[[World, str], str], may_apply: bool
) -> None:
    alias = spell(shared_world)
    before = story(shared_world, alias)
    shared_world.editor.buffers[shared_world.uri] = [before, 1 if story is not change_via_alias else 2]
    result = shared_world.server.answer(shared_world.accept(0))["result"]
    final = shared_world.editor.text(shared_world.uri)
    after = WITH_A if before == TYPED else WITH_A.removeprefix(TYPED_LINE)
    assert final in (before, after), f"the person's buffer was clobbered:\n{final}"
    assert result["applied"] is (final == after), result
    assert (shared_world.status(0) == "accepted") is result["applied"]
    if may_apply:
        assert result["applied"] is True, result
    else:
        assert result["applied"] is False and shared_world.editor.edits_received == 0, result
        assert "URI" in result["message"] or "out of sync" in result["message"], result
    assert (shared_world.root / shared_world.name).read_text() == ORIGINAL
