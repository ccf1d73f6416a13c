"""`deepseek/transcript`: a session's conversation for a chat view (the VS Code
panel), so a reloaded view shows what the streamed notifications showed before,
plus what only the log knows: each answer's model, routing explanation, tokens
and cost (`agent/transcript.py`)."""

from __future__ import annotations

from typing import Any

from deepseek_ls.lsp import names, params
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.session_views import agent, sessions_of


def transcript_request(ls: DeepSeekServer, raw: Any) -> dict[str, Any] | None:
    a = params.parse_args(params.OptionalSessionArgs, raw)
    sid = a.session_id or sessions_of(ls).active
    if not sid:
        return None
    core = agent(ls)
    return {"session_id": sid, "state": core.session_view(sid)["state"], "turns": core.transcript(sid)}


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import request

    request(server, names.REQ_TRANSCRIPT, transcript_request)
