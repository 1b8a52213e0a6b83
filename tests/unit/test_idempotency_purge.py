"""The background purge of expired Idempotency-Key answers lets the server's other work run between batches."""

from __future__ import annotations

import asyncio

from controlplane_adapters.clock import ManualClock
from controlplane_domain.idempotency.entity import IDEMPOTENCY_TTL
from controlplane_domain.idempotency.usecases import (
    PURGE_BATCH,
    Reservation,
    begin_idempotent_request,
    finish_idempotent_request,
)
from controlplane_runtime.periodic import purge_expired
from tests.support import memory_ports


async def test_a_backlog_is_deleted_in_batches_with_the_loop_free_between_them() -> None:
    clock = ManualClock()
    ports = memory_ports(clock)
    for index in range(2 * PURGE_BATCH + 5):
        reserved = await begin_idempotent_request(ports, "org", f"k{index}", "fp")
        assert isinstance(reserved, Reservation)
        await finish_idempotent_request(ports, "org", f"k{index}", reserved, 201, "text/plain", b"x")
    clock.advance(IDEMPOTENCY_TTL.total_seconds() + 1)
    ticks = 0

    async def other_work() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(other_work())
    await asyncio.sleep(0)
    started = ticks
    assert await purge_expired(ports) == 2 * PURGE_BATCH + 5
    ticking.cancel()
    assert ticks - started >= 2, "the purge held the event loop for its whole backlog"
    async with ports.uow() as work:
        assert await work.idempotency.get("org", "k0") is None
