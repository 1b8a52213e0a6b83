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
