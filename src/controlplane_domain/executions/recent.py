"""The executions this process last wrote, kept as a first guess for their next change."""

from __future__ import annotations

from controlplane_domain.executions.entity import Execution

DEFAULT_CAPACITY = 4096


class RecentExecutions:
    """The last `capacity` executions this process wrote, as it wrote them.

    A guess, never an answer: another process (or the lease reaper) may have changed an execution since. A change
    decided on a guess is recorded with a compare-and-set on the guess's `last_seq` (every change of an execution
    appends events; only a lease extension, which a narrow update leaves alone, does not), so a stale guess costs
    one refused write and is never stored. From execute to completion, a worker's events and completion then go
    straight to their write, without reading the execution first."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._items: dict[tuple[str, str], Execution] = {}

    def get(self, organization_id: str, execution_id: str) -> Execution | None:
        return self._items.get((organization_id, execution_id))

    def remember(self, execution: Execution) -> None:
        key = (execution.organization_id, execution.id)
        self._items.pop(key, None)
        self._items[key] = execution  # the newest last: the oldest go first
        if len(self._items) > self.capacity:
            del self._items[next(iter(self._items))]

    def __len__(self) -> int:
        return len(self._items)
