"""A hunk the model's diff matched only loosely says so on its lens and hover."""

from __future__ import annotations

from pathlib import Path

from lsp_harness import file_uri, lenses, open_doc
from lsprotocol import types

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

ORIGINAL = "def f():\n    if x:\n        return 1\n    return 2\n"
# The model re-indented the context with two spaces: matched ignoring whitespace.
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,9 +1,9 @@\n def f():\n  if x:\n-      return 1\n+        return 10\n    return 2\n"


async def test_loose_match_is_shown_on_the_lens_and_the_hover(editor, workspace: Path) -> None:
    client, _ = editor
    (workspace / "app.py").write_text(ORIGINAL)
    store = PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace))
    hunk = store.stage(DIFF).hunks[0]
    assert hunk.located == "whitespace" and hunk.recounted
    uri = file_uri(workspace)
    open_doc(client, uri, ORIGINAL, version=1)

    titles = {(lens.command.title, lens.range.start.line) for lens in await lenses(client, uri)}
    assert ("Accept (matched ignoring whitespace)", 2) in titles

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=4))
    )
    assert hover is not None
    text = hover.contents.value
    assert hunk.hunk_id in text and "ignoring whitespace" in text and "@@ counts recounted" in text
