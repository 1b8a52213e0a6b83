"""The workers' repository port (a unit of work's `workers`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from controlplane_domain.executions.entity import Execution
from controlplane_domain.paging import PageRequest
from controlplane_domain.workers.entity import Worker


class WorkerRepository(Protocol):
    async def get(self, organization_id: str, worker_id: str) -> Worker | None: ...

    async def worker_and_held(self, organization_id: str, worker_id: str) -> tuple[Worker | None, list[Execution]]:
        """The worker (None when it never registered) and the executions it holds (`executions.running_for_worker`'s),
        in one read: a heartbeat's."""

    async def register(self, worker: Worker) -> bool:
        """Insert the worker unless its id is taken in the organization; True when this call inserted it (of two
        concurrent first heartbeats, exactly one)."""

    async def save(self, worker: Worker) -> None:
        """Insert or replace the worker (keyed by organization and worker id); a stored worker keeps its
        registered_at and its queue (which only `move_to_queue` changes: a report's queue may be read before a
        concurrent lease moved the worker)."""

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        """Insert or replace each worker, except where the stored one heartbeated later (written by another
        process meanwhile); registered_at and the queue keep their stored values, as with `save`."""

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        """The worker polls this queue now (a lease): its queue, and nothing else, changes."""

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]: ...

    async def recent(self, organization_id: str, limit: int) -> list[Worker]:
        """The organization's workers heard from most recently, at most `limit` (latest heartbeat first, then by
        worker id)."""

    async def silent_since(self, before: datetime, limit: int, offset: int) -> list[Worker]:
        """Workers of every organization not stored as `offline` whose last heartbeat is before `before`, oldest
        heartbeat first (then by organization and worker id), a page at a time."""

    async def mark_offline(self, worker: Worker) -> bool:
        """Store `offline` for the worker unless it changed since it was read (its status or last heartbeat);
        True when this call changed it (of two nodes' sweeps, exactly one)."""

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        """Workers per queue not stored as `offline` (a worker that reported it is out at once) whose last heartbeat
        is at or after `since`."""
