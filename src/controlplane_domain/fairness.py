"""Background work shared fairly between organizations: a round of the scheduler (jobs/firing.py) or of the
workflow steps' timeout sweep (workflows/timeouts.py) reads its due items in turns, every organization's earliest
before any organization's second, and at most `per_organization` of one organization. One organization's backlog
then delays another's earliest due item by at most one item of each organization ahead of it in the round (see
docs/api-decisions.md, "Bounds"). The SQL stores order the same way (controlplane_adapters/sql/fair.py).

Work that a request starts (a workflow run started, cancelled or fired by a trigger) takes one of its
organization's slots (`OrganizationSlots`) for its unit of work: an organization has at most so many at once on a
node, and its other such requests wait for a slot holding nothing (no database connection)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable, Hashable, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def in_turns(
    items: Iterable[T],
    organization_of: Callable[[T], str],
    due_key: Callable[[T], Any],
    *,
    limit: int,
    per_organization: int,
) -> list[T]:
    """The due `items` in turns: ranked within their organization by `due_key` (earliest first), at most
    `per_organization` each; then by rank, and within a rank by `due_key`; the first `limit`."""
    ranked: list[tuple[int, Any, T]] = []
    by_organization: dict[str, list[T]] = {}
    for item in items:
        by_organization.setdefault(organization_of(item), []).append(item)
    for own in by_organization.values():
        own.sort(key=due_key)
        ranked.extend((rank, due_key(item), item) for rank, item in enumerate(own[:per_organization]))
    ranked.sort(key=lambda entry: (entry[0], entry[1]))
    return [item for _, _, item in ranked[:limit]]


def more_due(read: Iterable[Hashable], *, limit: int, per_organization: int) -> bool:
    """Whether a round that read these organizations' items (one entry an item) may have left due items unread:
    it read `limit` items, or `per_organization` of one organization."""
    counts = Counter(read)
    return sum(counts.values()) >= limit or any(count >= per_organization for count in counts.values())


class OrganizationSlots:
    """At most `per_organization` units of work of one organization at once in this process (each in a slot, from
    before its unit of work opens to after it ends); the organization's others wait for a slot, in turn, holding
    nothing. Another organization never waits for these slots."""

    def __init__(self, per_organization: int) -> None:
        if per_organization < 1:
            raise ValueError("an organization needs at least one slot")
        self.per_organization = per_organization
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._users: Counter[str] = Counter()  # the organization's units of work in or waiting for a slot
        self._holding: Counter[str] = Counter()  # ... in a slot

    @asynccontextmanager
    async def slot(self, organization_id: str) -> AsyncIterator[None]:
        semaphore = self._slots.get(organization_id)
        if semaphore is None:
            semaphore = self._slots[organization_id] = asyncio.Semaphore(self.per_organization)
        self._users[organization_id] += 1
        try:
            async with semaphore:
                self._holding[organization_id] += 1
                try:
                    yield
                finally:
                    self._holding[organization_id] -= 1
        finally:
            self._users[organization_id] -= 1
            if not self._users[organization_id]:  # nobody holds or waits: forget the organization
                del self._users[organization_id], self._slots[organization_id], self._holding[organization_id]

    def holding(self, organization_id: str) -> int:
        """The organization's units of work in a slot now."""
        return self._holding[organization_id]

    def waiting(self, organization_id: str) -> int:
        """The organization's units of work waiting for a slot now."""
        return self._users[organization_id] - self._holding[organization_id]
