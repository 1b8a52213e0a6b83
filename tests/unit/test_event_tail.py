"""The event tail shares one read between concurrent followers and never mixes organizations."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from controlplane_adapters.memory.tail import EventTail
from controlplane_domain.executions import EventType, ExecutionEvent

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
