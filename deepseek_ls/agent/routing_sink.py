"""One sink for services shared by every session of a workspace (LLM client, patch store).

Events go to the session bound to the current asyncio task (a context
variable, which `asyncio.to_thread` carries into worker threads). Events
emitted outside any session — the editor accepting a hunk calls
`PatchStore.mark_applied` directly — go to the session that staged that patch.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from typing import Any, Callable, Iterator, Mapping

log = logging.getLogger("deepseek_ls.agent")

_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("deepseek_ls_session", default=None)


@contextlib.contextmanager
def bound(session: Any) -> Iterator[None]:
    token = _CURRENT.set(session)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_session() -> Any:
    return _CURRENT.get()


class RoutingSink:
    def __init__(self, owner_of_patch: Callable[[str], Any]) -> None:
        self._owner_of_patch = owner_of_patch

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        session = _CURRENT.get()
        if session is None and payload.get("patch_id"):
            session = self._owner_of_patch(str(payload["patch_id"]))
            # Done by the editor between agent requests: replay re-injects these as inputs.
            payload = {**payload, "external": True}
        if session is None:
            log.debug("event %s outside any session: not recorded", kind)
            return
        session.emit(kind, payload)
