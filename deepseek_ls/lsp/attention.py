"""`deepseek/attention`: telling the editor that a session waits for the person or finished.

The agent's `NotifyingUI` (extensions/notify.py) calls the server's UI port `notify(...)` when an
approval, a question, a plan or staged changes wait for the person, and when a long request
finished, failed or paused. The server sends `deepseek/attention` {kind, session_id, title, message,
pending}: kind `waiting`, `finished`, or `answered` (a wait ended: sent after every approval and
question, so a client's count follows), `pending` the number of approvals and questions waiting
on this connection now (what a badge shows). Our clients show it (VS Code's notification and panel
badge, Neovim's vim.notify) and declare so (`capabilities.experimental.deepseekAttention`).

A client without our plugin already sees every wait (an approval is a `window/showMessageRequest`,
a question a `window/showMessage`), so it is told nothing more about waits, which would say each one
twice; what it would not see is that a request finished: that is one `window/showMessage` (Info).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.lsp.session_views import sessions_of

if TYPE_CHECKING:
    from deepseek_ls.lsp.server import DeepSeekServer

log = logging.getLogger(__name__)

AttentionKind = Literal["waiting", "finished", "answered"]


def shows_attention(ls: DeepSeekServer) -> bool:
    """The client said (`capabilities.experimental`) it shows `deepseek/attention` itself."""
    from deepseek_ls.lsp.questions import declares

    return declares(ls, names.EXPERIMENTAL_ATTENTION)


def tell(ls: DeepSeekServer, kind: AttentionKind, title: str, message: str, session_id: str | None,
         pending: int) -> None:
    """Send `deepseek/attention` (`pending`: approvals and questions waiting on this connection); a
    finished request is also a showMessage for a plain client."""
    if session_id is None:
        from deepseek_ls.agent.routing_sink import current_session

        session_id = getattr(current_session(), "session_id", None) or sessions_of(ls).active
    ls.notify(names.NOTIFY_ATTENTION, {"kind": kind, "session_id": session_id, "title": title,
                                       "message": message, "pending": pending})
    if kind == "finished" and not shows_attention(ls):
        ls.show_message(f"{title}: {message}", types.MessageType.Info)


def answered(ls: DeepSeekServer, session_id: str | None, pending: int) -> None:
    """A wait ended (answered, dismissed, timed out or cancelled): the client's count follows."""
    try:
        tell(ls, "answered", "deepseek-ls", "answered", session_id, pending)
    except Exception:  # noqa: BLE001 - a badge that lags is not worth failing the answer for
        log.exception("deepseek/attention (answered) could not be sent")
