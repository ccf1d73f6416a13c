"""`textDocument/codeAction`: one handler, the actions of every feature that offers some.

LSP lets a server answer code actions once per request, so features add a provider
(`add_provider(server, provider)`: `(ls, params) -> [CodeAction]`) instead of registering
the method themselves; one provider's failure is logged and the others' actions still go out.
Today: the review's "Apply fix" and "Dismiss" on its findings (`lsp/review.py`).
"""

from __future__ import annotations

import logging
from typing import Callable
from weakref import WeakKeyDictionary

from lsprotocol import types

from deepseek_ls.lsp.server import DeepSeekServer

log = logging.getLogger(__name__)

Provider = Callable[[DeepSeekServer, types.CodeActionParams], list[types.CodeAction]]
_PROVIDERS: WeakKeyDictionary[DeepSeekServer, list[Provider]] = WeakKeyDictionary()


def add_provider(server: DeepSeekServer, provider: Provider) -> None:
    _PROVIDERS.setdefault(server, []).append(provider)


def code_actions(ls: DeepSeekServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    actions: list[types.CodeAction] = []
    for provider in _PROVIDERS.get(ls, []):
        try:
            actions += provider(ls, params)
        except Exception:  # noqa: BLE001 - one feature's failure must not hide the others' actions
            log.exception("code actions of %s failed", getattr(provider, "__name__", provider))
    wanted = params.context.only
    if wanted:
        # Kinds by their value: str() of lsprotocol's CodeActionKind is "CodeActionKind.QuickFix".
        asked = [getattr(k, "value", k) for k in wanted]
        actions = [a for a in actions if a.kind and any(getattr(a.kind, "value", a.kind).startswith(k) for k in asked)]
    return actions or None


def register(server: DeepSeekServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                   types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))(code_actions)
