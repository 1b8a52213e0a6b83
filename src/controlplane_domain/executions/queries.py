"""Reading executions: one, a page, its events, and following them as they are appended (SSE)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from controlplane_domain.executions.entity import EventType, Execution, ExecutionEvent
from controlplane_domain.executions.ports import ExecutionFilter
from controlplane_domain.executions.transitions import NO_BUS_POLL_SECONDS, require_execution
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports


async def get_execution(ports: Ports, organization_id: str, execution_id: str) -> Execution:
    async with ports.read() as uow:
        return await require_execution(uow, organization_id, execution_id)


async def list_executions(
    ports: Ports, organization_id: str, page: PageRequest, where: ExecutionFilter
) -> Page[Execution]:
    async with ports.read() as uow:
        items, total = await uow.executions.list_page(organization_id, page, where)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def list_events(ports: Ports, organization_id: str, execution_id: str, page: PageRequest) -> Page[ExecutionEvent]:
    """Events in sequence order; `offset` skips that many (so it equals the last sequence number seen)."""
    async with ports.read() as uow:
        execution = await require_execution(uow, organization_id, execution_id)
        past_the_end = page.offset >= execution.last_seq  # (an offset no store's sequence numbers reach included)
        items = (
            []
            if past_the_end
            else await uow.executions.events_after(organization_id, execution_id, page.offset, page.limit)
        )
    return Page(items=items, total=execution.last_seq, limit=page.limit, offset=page.offset)


EVENTS_PAGE = 200


async def read_events_after(
    ports: Ports, organization_id: str, execution_id: str, after_seq: int
) -> list[ExecutionEvent]:
    """Up to EVENTS_PAGE events after `after_seq`, in order."""
    async with ports.read() as uow:
        return await uow.executions.events_after(organization_id, execution_id, after_seq, EVENTS_PAGE)


async def follow(
    ports: Ports,
    organization_id: str,
    execution_id: str,
    after_seq: int,
    keepalive_seconds: float,
    read_after: Callable[[str, str, int], Awaitable[list[ExecutionEvent]]] | None = None,
) -> AsyncIterator[ExecutionEvent | None]:
    """Every event after `after_seq`, pushed as it is appended, ending after the terminal one.
    Yields None when `keepalive_seconds` pass without an event (time for a keep-alive).
    `read_after` may share reads between followers (see the adapters' EventTail)."""
    await get_execution(ports, organization_id, execution_id)

    async def direct(organization: str, execution: str, seq: int) -> list[ExecutionEvent]:
        return await read_events_after(ports, organization, execution, seq)

    reader = read_after or direct
    subscription = ports.bus.subscribe(f"execution:{execution_id}") if ports.bus is not None else None
    last = after_seq
    # The execution is looked at when a read finds nothing new on the first pass or after a wait that ended in
    # silence: every terminal change appends a done event (which ends the stream), so after a batch or a
    # wake-up an empty read only means "caught up", and a thousand woken streams make no thousand lookups.
    look = True
    quiet_since = time.monotonic()
    try:
        while True:
            events = await reader(organization_id, execution_id, last)
            execution = None
            if not events and look:
                async with ports.read() as uow:
                    execution = await require_execution(uow, organization_id, execution_id)
            for event in events:
                yield event
                last = event.seq
                if event.type is EventType.DONE:
                    return
            if execution is not None and execution.is_terminal and last >= execution.last_seq:
                return
            if events:
                look = False
                quiet_since = time.monotonic()
                continue
            if subscription is not None:
                woke = await subscription.wait(keepalive_seconds)
            else:  # no bus (an embedder's Ports): nothing wakes the stream, so it looks again every little while
                await asyncio.sleep(min(keepalive_seconds, NO_BUS_POLL_SECONDS))
                woke = time.monotonic() - quiet_since < keepalive_seconds
            if not woke:
                yield None
                quiet_since = time.monotonic()
            look = not woke
    finally:
        if subscription is not None:
            subscription.close()
