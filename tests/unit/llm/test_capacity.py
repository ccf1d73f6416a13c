"""The model manager (llm/capacity.py): per-model max_inflight, the lane limit, shared 429 backoff."""

from __future__ import annotations

import asyncio
import time

from deepseek_ls.config_models import Config, ModelEntry
from deepseek_ls.llm.capacity import CALL_WATCHER, CapacityLLM, ModelManager, Queued
from deepseek_ls.llm.errors import RateLimitError, ServerError


def config(max_inflight: int | None = 2, max_lanes: int = 3) -> Config:
    cfg = Config()
    cfg.models["tiny"] = ModelEntry(id="tiny-model", max_inflight=max_inflight)
    cfg.agent_loop.max_lanes = max_lanes
    return cfg


class CountingClient:
    """Stands in for the HTTP client only: the manager under test is the real one."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.retry_listeners: list = []

    def resolve(self, profile: str, model: str | None = None):
        class R:
            entry_name = model or "tiny"
            model_id = "tiny-model"

        return R()

    async def complete(self, messages, *, role, profile="fast", model=None, **kw):
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.02)
        self.running -= 1
        return role


async def test_max_inflight_bounds_concurrent_calls_to_a_model():
    client = CountingClient()
    llm = CapacityLLM(client, ModelManager(config(max_inflight=2)))
    answers = await asyncio.gather(*(llm.complete([], role=f"r{i}") for i in range(6)))
    assert answers == [f"r{i}" for i in range(6)]
    assert client.peak == 2


async def test_a_model_without_a_known_limit_is_not_throttled():
    client = CountingClient()
    llm = CapacityLLM(client, ModelManager(config()))
    await asyncio.gather(*(llm.complete([], role="r", model="unknown") for _ in range(5)))
    assert client.peak == 5


async def test_the_lane_limit_queues_lanes():
    manager = ModelManager(config(max_lanes=2))
    seen: list[tuple[int, int]] = []

    async def lane() -> None:
        async with manager.lane_slot():
            seen.append((manager.lanes_running, manager.lanes_queued))
            await asyncio.sleep(0.02)

    await asyncio.gather(*(lane() for _ in range(5)))
    assert manager.peak_lanes == 2
    assert max(r for r, _ in seen) == 2 and any(q > 0 for _, q in seen)
    assert manager.lanes_running == 0 and manager.lanes_queued == 0


async def test_a_429_in_one_lane_pauses_every_lane():
    now = [100.0]
    manager = ModelManager(config(), clock=lambda: now[0])
    client = CountingClient()
    CapacityLLM(client, manager)
    assert client.retry_listeners == [manager.note_retry]
    client.retry_listeners[0](ServerError("boom"), 5.0)  # not a rate limit: no pause
    assert manager.paused_for == 0
    client.retry_listeners[0](RateLimitError("slow down"), 5.0)
    assert manager.rate_limited == 1 and manager.paused_for == 5.0
    now[0] += 5.0
    assert manager.paused_for == 0


async def test_calls_wait_out_the_shared_backoff():
    manager = ModelManager(config())
    client = CountingClient()
    llm = CapacityLLM(client, manager)
    manager.note_retry(RateLimitError("slow down"), 0.05)
    await llm.complete([], role="r")
    assert manager.paused_seconds > 0


async def test_a_real_429_from_the_server_reaches_the_manager(fake_deepseek, make_client):
    fake_deepseek.add({"fault": {"status": 429, "retry_after": 0.01}})
    fake_deepseek.add({"content": "ok"})
    manager = ModelManager(config())
    llm = CapacityLLM(make_client(), manager)
    completion = await llm.complete([{"role": "user", "content": "hi"}], role="executor")
    assert completion.content == "ok"
    assert manager.rate_limited == 1


async def test_a_429_that_comes_while_a_call_waits_for_its_slot_is_waited_out_too():
    now = [0.0]
    manager = ModelManager(config(max_inflight=1), clock=lambda: now[0])
    order: list[str] = []

    async def first() -> None:
        async with manager.model_slot("tiny"):
            order.append("first")
            await asyncio.sleep(0.01)
            manager.note_retry(RateLimitError("slow down"), 0.05)  # met while the second waits for the slot

    async def second() -> None:
        async with manager.model_slot("tiny"):
            order.append(f"second, paused_for={manager.paused_for}")

    async def clock() -> None:
        while len(order) < 2:
            await asyncio.sleep(0.01)
            if manager.inflight.get("tiny", 0) == 0 and manager.paused_for:
                order.append("pause over")
                now[0] += 1.0

    await asyncio.gather(first(), second(), clock())
    assert order == ["first", "pause over", "second, paused_for=0.0"]


class Watcher:
    """Records what the manager tells one call (the agent's runtime shows it as progress)."""

    def __init__(self) -> None:
        self.seen: list[Queued | str] = []

    def queued(self, wait: Queued) -> None:
        self.seen.append(wait)

    def started(self, model: str) -> None:
        self.seen.append(f"started {model}")


async def watched(manager: ModelManager, watcher: Watcher, hold: asyncio.Event | None = None) -> None:
    CALL_WATCHER.set(watcher)  # this task's context only
    async with manager.model_slot("tiny"):
        if hold is not None:
            await hold.wait()


async def test_a_call_waiting_for_a_slot_is_told_queued_then_started():
    manager = ModelManager(config(max_inflight=1))
    first, second, release = Watcher(), Watcher(), asyncio.Event()
    running = asyncio.ensure_future(watched(manager, first, release))
    while not manager.inflight.get("tiny"):
        await asyncio.sleep(0)
    waiting = asyncio.ensure_future(watched(manager, second))
    while not second.seen:
        await asyncio.sleep(0)
    assert second.seen == [Queued("tiny", "max_inflight", inflight=1, limit=1)]
    assert second.seen[0].describe() == "1 call(s) in flight, max_inflight 1"
    release.set()
    await asyncio.gather(running, waiting)
    assert first.seen == ["started tiny"]  # a free slot: no queued state at all
    assert second.seen[1:] == ["started tiny"]


async def test_a_call_held_by_a_429_pause_is_told_until_when():
    now = [0.0]
    manager = ModelManager(config(), clock=lambda: now[0])
    manager.note_retry(RateLimitError("slow down"), 7.0)
    watcher = Watcher()
    before = time.time()
    call = asyncio.ensure_future(watched(manager, watcher))
    while not watcher.seen:
        await asyncio.sleep(0)
    (wait,) = watcher.seen
    assert (wait.reason, wait.seconds) == ("rate_limit", 7.0)
    assert before + 7.0 <= wait.until <= time.time() + 7.0
    assert "429" in wait.describe() and time.strftime("%H:%M:%S", time.localtime(wait.until)) in wait.describe()
    now[0] += 7.0  # the pause is over: the call starts
    await call
    assert watcher.seen[1:] == ["started tiny"]


async def test_no_watcher_is_told_about_another_tasks_call():
    manager = ModelManager(config())
    watcher = Watcher()
    await asyncio.ensure_future(watched(manager, watcher))  # its own task, as each session's call
    async with manager.model_slot("tiny"):  # this task set no watcher
        pass
    assert watcher.seen == ["started tiny"]


async def test_detach_stops_telling_the_manager():
    manager = ModelManager(config())
    client = CountingClient()
    llm = CapacityLLM(client, manager)
    llm.detach()
    assert client.retry_listeners == []


# -- the fallback model takes a slot of its own ---------------------------------------------------

FLASH, PRO = "deepseek-v4-flash", "deepseek-v4-pro"
HI = [{"role": "user", "content": "hi"}]


def fallback_llm(make_client, *, flash: int, pro: int, clock=None) -> CapacityLLM:
    """The real client and manager: `fast` (flash) falls back to pro, `max_think` (pro) to flash."""
    cfg = Config()
    cfg.models[FLASH] = cfg.models[FLASH].model_copy(update={"max_inflight": flash})
    cfg.models[PRO] = cfg.models[PRO].model_copy(update={"max_inflight": pro})
    client = make_client()
    profiles = client.config.profiles
    profiles["fast"] = profiles["fast"].model_copy(update={"model": FLASH, "fallback_model": PRO})
    profiles["max_think"] = profiles["max_think"].model_copy(update={"model": PRO, "fallback_model": FLASH})
    manager = ModelManager(cfg, clock=clock) if clock else ModelManager(cfg)
    return CapacityLLM(client, manager)


async def test_the_fallback_model_keeps_its_own_max_inflight(fake_deepseek, make_client):
    fake_deepseek.add({"match": {"model": FLASH}, "fault": {"status": 503}, "repeat": True})
    fake_deepseek.add({"match": {"model": PRO}, "content": "from pro", "repeat": True,
                       "fault": {"delay_before_first_byte": 0.05}})
    llm = fallback_llm(make_client, flash=3, pro=1)
    answers = await asyncio.wait_for(asyncio.gather(*(llm.complete(HI, role="ask") for _ in range(3))), 30)
    assert [a.content for a in answers] == ["from pro"] * 3
    assert fake_deepseek.peak_inflight[PRO] == 1  # the server never saw two fallback calls at once
    assert llm.manager.peak_inflight == {FLASH: 3, PRO: 1}
    assert llm.manager.inflight == {FLASH: 0, PRO: 0}


async def test_always_answers_when_two_calls_fall_back_across_each_other(fake_deepseek, make_client):
    """Each holds the slot the other falls back to (max_inflight=1 both): no deadlock, as no call
    ever holds two models' slots."""
    fake_deepseek.add({"match": {"model": FLASH, "role": "a"}, "fault": {"status": 503}, "repeat": True})
    fake_deepseek.add({"match": {"model": PRO, "role": "b"}, "fault": {"status": 503}, "repeat": True})
    fake_deepseek.add({"match": {"model": PRO}, "content": "from pro", "repeat": True})
    fake_deepseek.add({"match": {"model": FLASH}, "content": "from flash", "repeat": True})
    llm = fallback_llm(make_client, flash=1, pro=1)
    a, b = await asyncio.wait_for(asyncio.gather(llm.complete(HI, role="a", profile="fast"),
                                                 llm.complete(HI, role="b", profile="max_think")), 30)
    assert (a.content, b.content) == ("from pro", "from flash")
    assert llm.manager.peak_inflight == {FLASH: 1, PRO: 1}
    assert fake_deepseek.peak_inflight == {FLASH: 1, PRO: 1}


async def test_the_fallback_call_waits_out_a_429_pause(fake_deepseek, make_client):
    """A 429 met elsewhere while the first model is failing pauses the fallback attempt too."""
    now = [0.0]
    fake_deepseek.add({"match": {"model": FLASH}, "fault": {"status": 503, "hold": "flash"}, "repeat": True})
    fake_deepseek.add({"match": {"model": PRO}, "content": "from pro"})
    llm = fallback_llm(make_client, flash=1, pro=1, clock=lambda: now[0])
    call = asyncio.ensure_future(llm.complete(HI, role="ask"))

    async def drive() -> None:
        while fake_deepseek.inflight.get(FLASH, 0) == 0:
            await asyncio.sleep(0.005)
        llm.manager.note_retry(RateLimitError("slow down"), 0.05)  # another lane's 429
        fake_deepseek.release("flash")
        while llm.manager.paused_seconds == 0 and not call.done():
            await asyncio.sleep(0.005)
        assert PRO not in [r.body["model"] for r in fake_deepseek.requests]  # not sent during the pause
        now[0] += 0.05

    await asyncio.wait_for(asyncio.gather(call, drive()), 30)
    assert call.result().content == "from pro"
    assert llm.manager.paused_seconds >= 0.05


class BrokenWatcher:
    """A progress report that cannot go out (say the editor went away): every call to it raises."""

    def queued(self, wait: Queued) -> None:
        raise RuntimeError("progress could not be sent")

    def started(self, model: str) -> None:
        raise RuntimeError("progress could not be sent")


async def test_always_answers_when_the_progress_watcher_raises():
    """Before, `started` raising after the slot was taken left the slot taken: the next call of the
    model waited for ever. Now the report is logged and the calls go on, one at a time."""
    manager = ModelManager(config(max_inflight=1))
    release = asyncio.Event()
    first = asyncio.ensure_future(watched(manager, BrokenWatcher(), release))  # type: ignore[arg-type]
    async with asyncio.timeout(10):
        while not manager.inflight.get("tiny") and not first.done():
            await asyncio.sleep(0)
    assert not first.done()  # it holds its slot and runs (before: it failed, keeping the slot)
    second = asyncio.ensure_future(watched(manager, BrokenWatcher()))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert not second.done()  # queued behind the first (told so, and that report failed too)
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert manager.inflight["tiny"] == 0 and manager.peak_inflight["tiny"] == 1
    async with asyncio.timeout(10):  # the slot is free again
        async with manager.model_slot("tiny"):
            pass
