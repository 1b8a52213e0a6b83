"""The outbox's writer: each event is written in the unit of work of the change that causes it (the caller
commits), as one delivery for each enabled webhook of the organization that listens to it; nothing at all is
written, or read, where this node knows that nobody listens (listeners.py). What each event says is its own
area's (`<area>/webhook_events.py`: executions, workflows, workers, jobs).

`emit` writes an event at once (`uow.webhooks.enqueue`). `prepare` only makes it, for a change that writes its
events itself: an execution's change hands them to `executions.record(..., outbox=...)`, which writes them with
the change, or not at all when the change does not happen."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from controlplane_domain.webhooks.entity import EVERY_EVENT, Event, body

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork

_positions = itertools.count()


async def listening(ports: Ports, uow: UnitOfWork, organization_id: str, event_type: str) -> bool:
    """Whether an enabled webhook of the organization may listen to `event_type` (no cache wired: maybe)."""
    cache = ports.webhook_listeners
    if cache is None:
        return True
    listened = cache.known(organization_id)
    if listened is None:
        generation = cache.generation
        listened = await uow.webhooks.listened(organization_id)
        cache.learned(organization_id, generation, listened)
    return EVERY_EVENT in listened or event_type in listened


async def prepare(
    ports: Ports, uow: UnitOfWork, organization_id: str, event_type: str, data: dict[str, Any], now: datetime
) -> Event | None:
    """The event, to be written in `uow` by the caller; None when nobody listens (nothing to write)."""
    if not await listening(ports, uow, organization_id, event_type):
        return None
    return Event(
        id=ports.ids.new_id(),
        organization_id=organization_id,
        type=event_type,
        payload=body(event_type, now, data),
        created_at=now,
        position=next(_positions),
    )


async def emit(
    ports: Ports, uow: UnitOfWork, organization_id: str, event_type: str, data: dict[str, Any], now: datetime
) -> bool:
    """Write the event for its listeners in `uow`; whether any delivery was written (publish `listeners.DUE` after
    the commit then)."""
    event = await prepare(ports, uow, organization_id, event_type, data, now)
    return event is not None and await uow.webhooks.enqueue(event) > 0


async def enqueue_all(uow: UnitOfWork, events: Sequence[Event]) -> bool:
    """Write prepared events in `uow`, for a change that does not write them itself; whether any delivery was."""
    wrote = False
    for event in events:
        wrote = await uow.webhooks.enqueue(event) > 0 or wrote
    return wrote
