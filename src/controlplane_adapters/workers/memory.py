"""The workers in the memory store, by organization and worker id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Self

from controlplane_adapters.memory.base import sorted_page
from controlplane_domain.executions.entity import HELD, Execution
from controlplane_domain.paging import PageRequest
from controlplane_domain.workers.entity import Worker, WorkerStatus

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork


class MemoryWorkerRepository:
    def __init__(self, rows: dict[tuple[str, str], Worker], executions: Mapping[str, Execution]) -> None:
        self.rows = rows
        self.executions = executions  # (the store's, by id: what a worker holds)

    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(unit.table("workers"), unit.table("executions"))

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        return self.rows.get((organization_id, worker_id))

    async def worker_and_held(self, organization_id: str, worker_id: str) -> tuple[Worker | None, list[Execution]]:
        held = [
            execution
            for execution in self.executions.values()
            if execution.organization_id == organization_id
            and execution.worker_id == worker_id
            and execution.status in HELD
        ]
        return self.rows.get((organization_id, worker_id)), held

    async def register(self, worker: Worker) -> bool:
        if (worker.organization_id, worker.worker_id) in self.rows:
            return False
        await self.save(worker)
        return True

    async def save(self, worker: Worker) -> None:
        key = (worker.organization_id, worker.worker_id)
        stored = self.rows.get(key)
        if stored is not None:
            worker = replace(worker, registered_at=stored.registered_at, queue_id=stored.queue_id)
        self.rows[key] = worker

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        for worker in workers:
            stored = self.rows.get((worker.organization_id, worker.worker_id))
            if stored is None or stored.last_heartbeat_at <= worker.last_heartbeat_at:
                await self.save(worker)

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        stored = self.rows.get((organization_id, worker_id))
        if stored is not None:
            self.rows[(organization_id, worker_id)] = replace(stored, queue_id=queue_id)

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        mine = (worker for (org, _), worker in self.rows.items() if org == organization_id)
        return sorted_page(mine, lambda worker: (worker.registered_at, worker.worker_id), page)

    async def recent(self, organization_id: str, limit: int) -> list[Worker]:
        mine = [worker for (org, _), worker in self.rows.items() if org == organization_id]
        mine.sort(key=lambda worker: worker.worker_id)
        mine.sort(key=lambda worker: worker.last_heartbeat_at, reverse=True)
        return mine[:limit]

    async def silent_since(self, before: datetime, limit: int, offset: int) -> list[Worker]:
        silent = [
            w for w in self.rows.values() if w.status is not WorkerStatus.OFFLINE and w.last_heartbeat_at < before
        ]
        silent.sort(key=lambda w: (w.last_heartbeat_at, w.organization_id, w.worker_id))
        return silent[offset : offset + limit]

    async def mark_offline(self, worker: Worker) -> bool:
        key = (worker.organization_id, worker.worker_id)
        stored = self.rows.get(key)
        if stored is None or (stored.status, stored.last_heartbeat_at) != (worker.status, worker.last_heartbeat_at):
            return False
        self.rows[key] = replace(stored, status=WorkerStatus.OFFLINE)
        return True

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (org, _), worker in self.rows.items():
            if (
                org == organization_id
                and worker.queue_id in queue_ids
                and worker.status is not WorkerStatus.OFFLINE
                and worker.last_heartbeat_at >= since
            ):
                queue_id = worker.queue_id or ""
                counts[queue_id] = counts.get(queue_id, 0) + 1
        return counts
