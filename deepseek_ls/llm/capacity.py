"""The model manager: shared capacity of the models and of the teammate lanes.

One manager per workspace `Agent`, and every model call of that agent goes
through it: the sessions' planner, executor, recovery and Hetun research calls
as well as the teammate lanes' (agent/lanes), which share their owner's. Every
call takes a slot of its model first, so no more than the registry's
`max_inflight` calls to one model run together (`[models.NAME] max_inflight`);
the others wait their turn instead of tripping the server's rate limit. A lane
itself takes one of `agent_loop.max_lanes` lane slots. A 429 seen by any call
(the client tells its retry listeners) pauses *every* new call until the
server's Retry-After has passed: one session or lane hitting the limit slows
all of them down.

A call that has to wait says so: the caller sets `CALL_WATCHER` (a contextvar,
so each session's task has its own) and the manager tells it `queued(Queued)`
each time the call starts to wait (for a slot, or for a 429 pause and until
when), then `started(model)` once the call holds its slot. The agent's runtime
turns these into progress ("queued ...", then "asking ...").
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Queued:
    """Why a model call waits before it starts.

    `reason` is "max_inflight" (every slot of `model` is taken: `inflight` calls run,
    `limit` allowed) or "rate_limit" (a 429 paused every call: `until` is the wall-clock
    time, seconds since the epoch, the pause ends, `seconds` from now)."""

    model: str
    reason: Literal["max_inflight", "rate_limit"]
    inflight: int = 0
    limit: int | None = None
    until: float | None = None
    seconds: float = 0.0

    def describe(self) -> str:
        """One line for a person: what the call waits for."""
        if self.reason == "rate_limit":
            until = time.strftime("%H:%M:%S", time.localtime(self.until or time.time()))
            return f"rate limited (429): every call paused until {until} ({self.seconds:.0f}s)"
        return f"{self.inflight} call(s) in flight, max_inflight {self.limit}"


class CallWatcher(Protocol):
    def queued(self, wait: Queued) -> None:
        """The call waits (told again if it must wait once more, e.g. a 429 came meanwhile)."""

    def started(self, model: str) -> None:
        """The call holds its slot and goes to the server now."""


# The watcher of the model call being made in this task (None: nobody is told).
CALL_WATCHER: contextvars.ContextVar[CallWatcher | None] = contextvars.ContextVar("call_watcher", default=None)


class ModelManager:
    """Per-model in-flight limits, the lane limit and the shared 429 backoff (one per workspace agent)."""

    def __init__(self, config: Config, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.max_lanes = config.agent_loop.max_lanes
        self._clock = clock
        self._models: dict[str, asyncio.Semaphore] = {}
        self._lanes: asyncio.Semaphore | None = None
        self._paused_until = 0.0
        self.inflight: dict[str, int] = {}
        self.peak_inflight: dict[str, int] = {}
        self.lanes_running = 0
        self.lanes_queued = 0
        self.peak_lanes = 0
        self.rate_limited = 0  # 429s seen
        self.paused_seconds = 0.0  # time calls spent waiting for a 429 backoff

    # -- limits ------------------------------------------------------------------

    def limit(self, model: str) -> int | None:
        """`max_inflight` of the registry entry (or entry id) `model`; None: no limit known."""
        entry = self.config.models.get(model) or next(
            (e for e in self.config.models.values() if e.id == model), None)
        return entry.max_inflight if entry is not None else None

    def _model_semaphore(self, model: str) -> asyncio.Semaphore | None:
        limit = self.limit(model)
        if limit is None:
            return None
        sem = self._models.get(model)
        if sem is None:
            sem = self._models[model] = asyncio.Semaphore(limit)
        return sem

    # -- slots -------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def model_slot(self, model: str) -> AsyncIterator[None]:
        """Hold one of `model`'s in-flight slots for a call (after any shared 429 backoff).

        The task's `CALL_WATCHER` is told each wait (`queued`) and the start (`started`)."""
        watcher = CALL_WATCHER.get()
        await self._wait_backoff(model, watcher)
        sem = self._model_semaphore(model)
        if sem is not None:
            if sem.locked():
                _tell(watcher, "queued", Queued(model, "max_inflight", inflight=self.inflight.get(model, 0),
                                                limit=self.limit(model)))
            await sem.acquire()
        try:
            # A 429 may have come while this call waited for its slot: it waits that out too.
            await self._wait_backoff(model, watcher)
        except BaseException:
            if sem is not None:
                sem.release()
            raise
        _tell(watcher, "started", model)
        self.inflight[model] = self.inflight.get(model, 0) + 1
        self.peak_inflight[model] = max(self.peak_inflight.get(model, 0), self.inflight[model])
        try:
            yield
        finally:
            self.inflight[model] -= 1
            if sem is not None:
                sem.release()

    @contextlib.asynccontextmanager
    async def lane_slot(self) -> AsyncIterator[None]:
        """Hold one of the `agent_loop.max_lanes` lane slots; waiting lanes count as queued."""
        if self._lanes is None:
            self._lanes = asyncio.Semaphore(self.max_lanes)
        self.lanes_queued += 1
        try:
            await self._lanes.acquire()
        finally:
            self.lanes_queued -= 1
        self.lanes_running += 1
        self.peak_lanes = max(self.peak_lanes, self.lanes_running)
        try:
            yield
        finally:
            self.lanes_running -= 1
            self._lanes.release()

    # -- rate limits -------------------------------------------------------------

    def note_retry(self, error: BaseException | None, wait: float) -> None:
        """The client's retry listener: a 429 pauses every call for the server's wait."""
        if getattr(error, "kind", None) != "rate_limit":
            return
        self.rate_limited += 1
        self._paused_until = max(self._paused_until, self._clock() + max(wait, 0.0))

    @property
    def paused_for(self) -> float:
        return max(0.0, self._paused_until - self._clock())

    async def _wait_backoff(self, model: str, watcher: CallWatcher | None) -> None:
        while (delay := self.paused_for) > 0:
            _tell(watcher, "queued", Queued(model, "rate_limit", until=time.time() + delay, seconds=delay))
            self.paused_seconds += delay
            await asyncio.sleep(delay)

    def view(self) -> dict[str, Any]:
        return {"lanes_running": self.lanes_running, "lanes_queued": self.lanes_queued,
                "max_lanes": self.max_lanes, "inflight": dict(self.inflight),
                "rate_limited": self.rate_limited, "paused_for": round(self.paused_for, 3)}


def _tell(watcher: CallWatcher | None, what: str, arg: Any) -> None:
    """Tell the call's watcher; its failure (a progress report that could not go out) is logged and
    never fails the call nor keeps its slot (every other call of the model would wait for ever)."""
    if watcher is None:
        return
    try:
        getattr(watcher, what)(arg)
    except Exception:  # noqa: BLE001 - progress is advisory; the call goes on
        log.warning("could not report a model call's progress (%s)", what, exc_info=True)


class CapacityLLM:
    """An LLM client whose every call first takes a slot of its model from the `ModelManager`.

    Everything else (resolve, build_body, config, sink, aclose) is the wrapped client's.
    The slot is held around the whole call, the client's own retries included (a call
    waiting out its 429 still counts against the model's limit). When an `LLMClient`
    falls back to the profile's `fallback_model`, it gives the first model's slot back
    and takes one of the fallback model's for that attempt (its own `max_inflight` and
    the 429 pause hold for it; never two slots at once, so no deadlock). The request
    itself is untouched: its body, request hash and `LLMCall@v1` record are the client's.
    """

    def __init__(self, client: Any, manager: ModelManager) -> None:
        self.client = client
        self.manager = manager
        listeners = getattr(client, "retry_listeners", None)
        if listeners is not None and manager.note_retry not in listeners:
            listeners.append(manager.note_retry)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def detach(self) -> None:
        """Stop telling the manager about the client's retries (its owner is done with it)."""
        listeners = getattr(self.client, "retry_listeners", None)
        if listeners is not None and self.manager.note_retry in listeners:
            listeners.remove(self.manager.note_retry)

    def _model_name(self, profile: str, model: str | None) -> str:
        try:
            resolved = self.client.resolve(profile, model)
        except Exception:  # noqa: BLE001 - the call itself reports a missing key
            return model or profile
        return resolved.entry_name or resolved.model

    async def complete(self, messages: Any, *, role: str, profile: str = "fast", model: str | None = None,
                       **kwargs: Any) -> Any:
        if isinstance(self.client, LLMClient):  # it takes the slot of each model it tries
            def slot(tried: str | None) -> contextlib.AbstractAsyncContextManager[None]:
                return self.manager.model_slot(self._model_name(profile, tried))

            return await self.client.complete(messages, role=role, profile=profile, model=model,
                                              model_slot=slot, **kwargs)
        async with self.manager.model_slot(self._model_name(profile, model)):
            return await self.client.complete(messages, role=role, profile=profile, model=model, **kwargs)
