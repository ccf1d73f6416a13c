"""Searches under an ACP client that refuses reads show nothing of the files it refused.

ripgrep and the code index read the disk, not the editor: under a client that offers its files
(`ClientOverlay`), each file a search matched is asked of the client before its text is shown, and
a match in a file it refused is withheld and said (never a silent empty result). In process, with
the real `ClientFiles` / `ClientOverlay` over a client object that answers `fs/read_text_file`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from deepseek_ls.acp.client_files import ClientFiles, ClientOverlay
from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, IndexConfig
from deepseek_ls.index.code_index import CodeIndex
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.sink import NullSink
from deepseek_ls.tools.host import ToolHost

PLAN = "launch_codename = 'BLUEHERON'  # the person's private notes\n"


class Editor:
    """An ACP client's file reads: it refuses `refuse` (every file when None) and answers the rest."""

    def __init__(self, root: Path, refuse: set[str] | None = None) -> None:
        self.root, self.refuse, self.asked = root, refuse, []

    async def read_text_file(self, session_id: str, path: str, **kwargs):
        rel = Path(path).relative_to(self.root).as_posix()
        self.asked.append(rel)
        if self.refuse is None or rel in self.refuse:
            raise PermissionError("Permission denied by user (--deny-all)")
        return SimpleNamespace(content=(self.root / rel).read_text())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("launch_codename = 'public'\n")
    (tmp_path / "notes.py").write_text(PLAN)
    (tmp_path / "zz_more.py").write_text("launch_codename = 'more'\n")
    return tmp_path


def _overlay(root: Path, editor: Editor) -> ClientOverlay:
    return ClientOverlay(root, ClientFiles(editor, "s1", root.resolve(), asyncio.get_running_loop()))


async def test_no_leak_acp_search_a_refused_files_lines_are_withheld_and_said(workspace):
    """The client refuses notes.py: its line is not in the result (the old code returned it from the
    disk, ok: True), the result says one match in notes.py was withheld and why; the rest are not
    asked once the client is refusing."""
    editor = Editor(workspace, refuse={"notes.py"})
    host = ToolHost(workspace, Config(), overlay=_overlay(workspace, editor))
    out = await host.call("fs.search_rg", {"query": "launch_codename"})
    assert out.ok, out.error
    shown = json.dumps(out.value)
    assert "BLUEHERON" not in shown, shown
    assert [m["path"] for m in out.value["matches"]] == ["app.py"]
    withheld = {w["path"]: w for w in out.value["withheld"]}
    assert withheld["notes.py"]["matches"] == 1 and "refused" in withheld["notes.py"]["reason"]
    assert "not asked" in withheld["zz_more.py"]["reason"]
    assert out.value["note"].startswith("2 matches withheld in 2 file(s)"), out.value["note"]
    assert editor.asked == ["app.py", "notes.py"]


async def test_no_leak_acp_search_deny_all_is_never_a_silent_empty_result(workspace):
    """`acpx --deny-all`: every match is withheld, and the result says so rather than 'no matches'."""
    host = ToolHost(workspace, Config(), overlay=_overlay(workspace, Editor(workspace)))
    out = await host.call("fs.search_rg", {"query": "launch_codename"})
    assert out.ok and out.value["matches"] == []
    assert "BLUEHERON" not in json.dumps(out.value)
    assert out.value["note"].startswith("3 matches withheld in 3 file(s) the editor did not let deepseek-ls read")


async def test_no_leak_acp_search_index_query_and_index_hits_withhold_refused_files(workspace):
    """The code index's hits carry lines read from the disk: under the refusing client neither the
    `index.query` tool nor the planner's index hits show notes.py's line; both say it was withheld."""
    index = CodeIndex(workspace, workspace / ".deepseek", IndexConfig())
    await asyncio.to_thread(index.build)
    overlay = _overlay(workspace, Editor(workspace, refuse={"notes.py"}))
    host = ToolHost(workspace, Config(), overlay=overlay, index=index)
    out = await host.call("index.query", {"q": "launch_codename BLUEHERON"})
    assert out.ok, out.error
    assert "BLUEHERON" not in json.dumps(out.value["hits"]), out.value
    assert "notes.py" in [w["path"] for w in out.value["withheld"]] and "withheld" in out.value["note"]

    config = Config()
    overlay = _overlay(workspace, Editor(workspace, refuse={"notes.py"}))
    patches = PatchStore(workspace, workspace / ".deepseek", policy=PathPolicy(workspace, []), overlay=overlay,
                         sink=NullSink())
    world = World(workspace, config, sink=NullSink(), overlay=overlay, patches=patches, index=index)
    text, _ = await world.index_hits("launch_codename BLUEHERON")
    assert "BLUEHERON" not in text and "withheld" in text and "notes.py" in text, text
