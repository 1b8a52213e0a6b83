"""The operations' reads in the memory store: a pass over its executions, workers and jobs."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Self

from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.jobs.entity import Job
from controlplane_domain.operations.entity import QueueBacklog
from controlplane_domain.workers.entity import Worker, WorkerStatus

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork

LIVE = frozenset({ExecutionStatus.QUEUED, ExecutionStatus.RUNNING, ExecutionStatus.WAITING_FOR_INPUT})


class MemoryOperationsRepository:
    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(unit.table("executions"), unit.table("workers"), unit.table("jobs"))

    def __init__(
        self, executions: dict[str, Execution], workers: dict[tuple[str, str], Worker], jobs: dict[str, Job]
    ) -> None:
        self.executions = executions
        self.workers = workers
        self.jobs = jobs

    async def live_executions(self) -> dict[ExecutionStatus, int]:
        return dict(Counter(e.status for e in self.executions.values() if e.status in LIVE))

    async def queue_backlogs(self) -> list[QueueBacklog]:
        depth: Counter[tuple[str, str]] = Counter()
        oldest: dict[tuple[str, str], datetime] = {}
        for execution in self.executions.values():
            if execution.status is not ExecutionStatus.QUEUED:
                continue
            key = (execution.organization_id, execution.worker_queue_id)
            depth[key] += 1
            queued_at = execution.queued_at or execution.created_at
            oldest[key] = min(oldest.get(key, queued_at), queued_at)
        return [QueueBacklog(org, queue, count, oldest.get((org, queue))) for (org, queue), count in depth.items()]

    async def worker_heartbeats(self) -> list[tuple[WorkerStatus, int, datetime]]:
        return [(w.status, w.heartbeat_interval_seconds, w.last_heartbeat_at) for w in self.workers.values()]

    async def earliest_due_firing(self, now: datetime) -> datetime | None:
        due = [j.next_run_at for j in self.jobs.values() if j.enabled and j.next_run_at and j.next_run_at <= now]
        return min(due, default=None)
