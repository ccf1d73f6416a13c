"""Rewind in the editor: `deepseek.checkpoints`, `deepseek.rewind`, `deepseek.redoRewind`.

Every prompt (session) is a checkpoint (agent/rewind.py). A rewind shows what it takes back and asks
with `window/showMessageRequest` ("Rewind" / "Cancel"; dismissed, cancelled or unanswered: nothing
is rewound) unless the editor asked already (`confirmed`). The code lands on the buffers the person
sees as one versioned `workspace/applyEdit` (the agent's restorer, `editor_undo`), 3-way, so what
was typed since stays; an overlap refuses it naming the files, nothing changed. A redo puts it back
the same way.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.edits import changed
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, refresh_session

log = logging.getLogger(__name__)
REWIND, CANCEL = "Rewind", "Cancel"


async def checkpoints(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Every prompt of the workspace, oldest first (files changed, rewound by), and the rewinds that can be redone."""
    ag = agent(ls)
    listed = await asyncio.to_thread(ag.checkpoints)
    live = await asyncio.to_thread(lambda: ag.rewinder.rewinds())
    return {"checkpoints": [c.to_json() for c in listed],
            "rewinds": [{k: r.get(k) for k in ("rewind_id", "to_session", "what", "sessions")} for r in live]}


async def rewind(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.RewindArgs, args)
    ag = agent(ls)
    sessions, ids = await asyncio.to_thread(ag.rewinder.scope, a.session_id, a.what != "conversation")
    files = ag.rewinder.covered(ids) if a.what != "conversation" else []
    if not a.confirmed:
        message = (f"Rewind {a.what} to before this prompt? It takes back {len(sessions)} prompt(s)"
                   + (f" and restores {', '.join(files)} (what you typed since is kept)." if files else "."))
        chosen = None
        try:
            chosen = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
                type=types.MessageType.Warning, message=message[:2000],
                actions=[types.MessageActionItem(title=REWIND), types.MessageActionItem(title=CANCEL)]))
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - no answer (or none possible): nothing is rewound
            log.info("rewind not confirmed: %s", error)
        if getattr(chosen, "title", None) != REWIND:
            return {"rewound": False, "message": "not rewound: nothing was changed"}
    result = await ag.rewind(sessions[0], a.what)
    changed(ls, result.files)
    refresh_session(ls, sessions[0], make_active=False)
    text = f"deepseek-ls: rewound {a.what}: {', '.join(result.files) or 'no file changed'}"
    if result.via.startswith("workspace/applyEdit") and result.files:
        text += " (in the editor: save to write it)"
    if result.kept:
        text += f"; left as they are: {', '.join(result.kept)}"
    ls.show_message(text)
    return {"rewound": True, **result.to_json()}


async def redo_rewind(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    a = params.parse_args(params.RedoRewindArgs, args)
    result = await agent(ls).redo_rewind(a.rewind_id)
    changed(ls, result.files)
    refresh_session(ls, result.to_session, make_active=False)
    ls.show_message(f"deepseek-ls: rewind redone: {', '.join(result.files) or 'no file changed'}")
    return result.to_json()


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_CHECKPOINTS, checkpoints)
    command(server, names.CMD_REWIND, rewind)
    command(server, names.CMD_REDO_REWIND, redo_rewind)
