"""The event tail shares one read between concurrent followers and never mixes organizations."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from controlplane_adapters.memory.tail import EventTail
from controlplane_domain.executions.entity import EventType, ExecutionEvent

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def event(seq: int, org: str = "org") -> ExecutionEvent:
    return ExecutionEvent(
        execution_id="e", organization_id=org, seq=seq, type=EventType.LOG, data={}, attempt=1, created_at=NOW
    )


async def test_concurrent_followers_share_one_read() -> None:
    log = {"org": [event(1), event(2)], "other": [event(1, "other")]}
    reads: list[tuple[str, int]] = []

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        reads.append((org, after))
        await asyncio.sleep(0)
        return [e for e in log[org] if e.seq > after]

    tail = EventTail(fetch)
    answers = await asyncio.gather(*(tail.after("org", "e", 0) for _ in range(50)))
    assert all([e.seq for e in answer] == [1, 2] for answer in answers)
    assert reads == [("org", 0)]
    log["org"].append(event(3))
    answers = await asyncio.gather(*(tail.after("org", "e", 2) for _ in range(50)))
    assert all([e.seq for e in answer] == [3] for answer in answers)
    assert reads == [("org", 0), ("org", 2)]
    assert [e.seq for e in await tail.after("org", "e", 1)] == [2, 3]
    assert len(reads) == 2, "served from the cache"
    other = await tail.after("other", "e", 0)
    assert [e.organization_id for e in other] == ["other"]


async def test_a_tail_that_sees_the_wake_ups_answers_caught_up_followers_without_reading() -> None:
    from controlplane_adapters.memory.bus import LocalEventBus

    bus = LocalEventBus()
    log = [event(1)]
    reads: list[int] = []

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        reads.append(after)
        return [e for e in log if e.seq > after][:2]  # pages of two

    tail = EventTail(fetch, bus=bus, page=2)
    assert [e.seq for e in await tail.after("org", "e", 0)] == [1]
    assert [await tail.after("org", "e", 1) for _ in range(100)] == [[]] * 100
    assert reads == [0], "nothing was published: the cache is current"
    log.extend([event(2), event(3), event(4)])
    await bus.publish("execution:e")  # events are published after they commit
    assert [e.seq for e in await tail.after("org", "e", 1)] == [2, 3, 4]  # full pages are read to the end
    assert reads == [0, 1, 3]
    assert await tail.after("org", "e", 4) == []
    assert reads == [0, 1, 3]
    assert bus.topics == 1
    tail.forget("org", "e")
    assert bus.topics == 0


async def test_a_publish_during_a_read_marks_the_cache_stale() -> None:
    from controlplane_adapters.memory.bus import LocalEventBus

    bus = LocalEventBus()
    log = [event(1)]

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        answer = [e for e in log if e.seq > after]
        log.append(event(len(log) + 1))  # committed after the read's snapshot...
        await bus.publish("execution:e")  # ...and published while the read is under way
        return answer

    tail = EventTail(fetch, bus=bus)
    assert [e.seq for e in await tail.after("org", "e", 0)] == [1]
    assert [e.seq for e in await tail.after("org", "e", 1)] == [2], "the wake-up during the read is not lost"


async def test_when_the_shared_read_fails_the_waiting_followers_read_for_themselves() -> None:
    log = [event(1)]
    attempts = 0

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0)
        if attempts == 1:
            raise ConnectionError("database gone")
        return [e for e in log if e.seq > after]

    tail = EventTail(fetch)
    answers = await asyncio.gather(*(tail.after("org", "e", 0) for _ in range(5)), return_exceptions=True)
    assert isinstance(answers[0], ConnectionError)
    assert [[e.seq for e in answer] for answer in answers[1:] if isinstance(answer, list)] == [[1]] * 4
    assert attempts == 2, "one follower read again for the others"


async def test_a_subscription_wait_wakes_on_publish_times_out_and_survives_cancellation() -> None:
    from controlplane_adapters.memory.bus import LocalEventBus

    bus = LocalEventBus()
    subscription = bus.subscribe("t")
    assert await subscription.wait(0.001) is False
    await bus.publish("t")
    assert await subscription.wait(10) is True, "published before the wait: answered at once"
    waiting = asyncio.create_task(subscription.wait(10))
    await asyncio.sleep(0)
    await bus.publish("t")
    assert await asyncio.wait_for(waiting, 1) is True
    cancelled = asyncio.create_task(subscription.wait(10))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    await bus.publish("t")
    assert subscription.take() is True
    assert subscription.take() is False
    subscription.close()
    assert bus.topics == 0


async def test_a_follower_arriving_during_a_read_waits_for_it_instead_of_calling_itself_caught_up() -> None:
    from controlplane_adapters.memory.bus import LocalEventBus

    bus = LocalEventBus()
    log = [event(1)]
    gate = asyncio.Event()

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        answer = [e for e in log if e.seq > after]
        if after >= 1:
            await gate.wait()  # a read that takes a while (Postgres: the network)
        return answer

    tail = EventTail(fetch, bus=bus)
    assert [e.seq for e in await tail.after("org", "e", 0)] == [1]
    log.append(event(2))
    await bus.publish("execution:e")
    first = asyncio.create_task(tail.after("org", "e", 1))  # woken first: reads
    await asyncio.sleep(0)
    second = asyncio.create_task(tail.after("org", "e", 1))  # woken second, while the read is under way
    await asyncio.sleep(0)
    gate.set()
    assert [e.seq for e in await first] == [2]
    assert [e.seq for e in await second] == [2], "the read in flight brought event 2 to every follower"


async def test_a_follower_that_goes_away_while_waiting_leaves_the_read_and_the_others_alone() -> None:
    release = asyncio.Event()
    reads = 0

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        nonlocal reads
        reads += 1
        await release.wait()
        return [e for e in (event(1), event(2)) if e.seq > after]

    tail = EventTail(fetch)
    reader = asyncio.create_task(tail.after("org", "e", 0))
    await asyncio.sleep(0)  # the reader's read is in flight
    waiting = [asyncio.create_task(tail.after("org", "e", 0)) for _ in range(3)]
    await asyncio.sleep(0)  # the followers wait for it
    waiting[0].cancel()
    await asyncio.gather(waiting[0], return_exceptions=True)
    release.set()
    answers = await asyncio.gather(reader, *waiting[1:])
    assert [[e.seq for e in answer] for answer in answers] == [[1, 2]] * 3
    assert reads == 1
    assert waiting[0].cancelled()


async def test_a_first_read_at_the_end_of_the_log_says_nothing_of_the_events_before() -> None:
    """A reader that resumed at the end (a browser reconnecting after `done`) must not make the cache answer
    "nothing after 0", nor "nothing after 2", to the readers that come next."""
    from controlplane_adapters.memory.bus import LocalEventBus

    log = [event(seq) for seq in range(1, 8)]
    reads: list[int] = []

    async def fetch(org: str, execution_id: str, after: int) -> list[ExecutionEvent]:
        reads.append(after)
        return [e for e in log if e.seq > after]

    tail = EventTail(fetch, bus=LocalEventBus())
    assert await tail.after("org", "e", 7) == []
    assert await tail.after("org", "e", 7) == [], "at the end: answered from the cache"
    assert reads == [7]
    assert [e.seq for e in await tail.after("org", "e", 0)] == list(range(1, 8))
    assert [e.seq for e in await tail.after("org", "e", 2)] == list(range(3, 8))
