"""The operations' repository: operator reads across every organization (the only kind, see DESIGN.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.operations.entity import QueueBacklog
from controlplane_domain.workers.entity import WorkerStatus


class OperationsRepository(Protocol):
    async def live_executions(self) -> dict[ExecutionStatus, int]:
        """How many executions are queued, running or waiting for input (finished ones are not counted: they
        grow without bound, and a count would read the whole table)."""
        ...

    async def queue_backlogs(self) -> list[QueueBacklog]:
        """Every queue with queued executions: its depth and its oldest `queued_at`."""
        ...

    async def worker_heartbeats(self) -> list[tuple[WorkerStatus, int, datetime]]:
        """Every worker's reported status, heartbeat interval and last heartbeat."""
        ...

    async def earliest_due_firing(self, now: datetime) -> datetime | None:
        """The earliest `next_run_at` at or before `now` of an enabled job (a firing not fired yet), or None."""
        ...
