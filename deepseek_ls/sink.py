"""The one way services record what they did: an `EventSink`.

Services (LLM client, tool host, patch store, index, router) take a sink and
call ``emit(kind, payload)``; they never open the event log themselves. The
agent's session passes its `EventLog` (which validates the payload against the
kind's model and appends it durably); unit tests pass a `ListSink`.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol


class EventSink(Protocol):
    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        """Record one event. `kind` is versioned, e.g. ``"ToolResult@v1"``."""


class NullSink:
    """Discards events: for callers that have no session (e.g. `index query`)."""

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        return None


class ListSink:
    """Keeps events in memory, for tests and for buffering before a session exists."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.events.append((kind, dict(payload)))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.events]
