"""Rewind in the editor never clobbers: `deepseek.checkpoints` lists the prompts, `deepseek.rewind`
asks (Cancel or a dismissed question rewinds nothing), then takes the prompt's change out of the
buffer the person sees, 3-way, so what they typed since stays; `deepseek.redoRewind` puts it back.
The real server, the fake DeepSeek on loopback, an editor with buffers (a mission applied unsaved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import APP, run
from test_lsp_undo import TYPED_GREET, approved_mission, events

from deepseek_ls.lsp import names


@pytest.mark.parametrize("client_name", ["visual-studio-code"])
async def test_never_clobber_rewind_in_the_editor_asks_keeps_typing_and_redoes(
        agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    sid, editor = await approved_mission(client, state, fake_deepseek, app_workspace)
    typed = editor.text("app.py").replace('"Hello " + name', '"Hi " + name')
    editor.type("app.py", typed)

    listed = await run(client, names.CMD_CHECKPOINTS, {})
    [mine] = [c for c in listed["checkpoints"] if c["session_id"] == sid]
    assert mine["files"] == ["app.py"] and mine["rewound"] is None and listed["rewinds"] == []

    for answer in ("Cancel", None):  # cancelled, dismissed: nothing rewound
        state.message_answer = lambda p, answer=answer: answer
        refused = await run(client, names.CMD_REWIND, {"session_id": sid, "what": "code"})
        assert refused == {"rewound": False, "message": "not rewound: nothing was changed"}
        assert editor.text("app.py") == typed
    assert "restores app.py" in state.message_requests[-1].message
    assert events(app_workspace, sid, "Rewound@v1") == []

    state.message_answer = lambda p: "Rewind"
    done = await run(client, names.CMD_REWIND, {"session_id": sid, "what": "code"})
    assert done["rewound"] and done["files"] == ["app.py"] and done["via"] == "workspace/applyEdit"
    assert editor.text("app.py") == TYPED_GREET  # the fix gone, the typing kept
    assert (app_workspace / "app.py").read_text() == APP  # never written under the editor
    assert events(app_workspace, sid, "Rewound@v1")[0]["rewind_id"] == done["rewind_id"]

    redone = await run(client, names.CMD_REDO_REWIND, {})
    assert redone["redone"] and redone["files"] == ["app.py"]
    assert editor.text("app.py") == typed
    assert events(app_workspace, sid, "RewindRedone@v1")[0]["rewind_id"] == done["rewind_id"]
