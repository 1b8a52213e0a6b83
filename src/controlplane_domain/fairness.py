"""Background work shared fairly between organizations: a round of the scheduler (jobs/firing.py) or of the
workflow steps' timeout sweep (workflows/timeouts.py) reads its due items in turns, every organization's earliest
before any organization's second, and at most `per_organization` of one organization. One organization's backlog
then delays another's earliest due item by at most one item of each organization ahead of it in the round (see
docs/api-decisions.md, "Bounds"). The SQL stores order the same way (controlplane_adapters/sql/fair.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
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
