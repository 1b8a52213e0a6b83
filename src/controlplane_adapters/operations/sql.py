"""The operations' reads in SQL: four small aggregate statements, each served by an index.

The live executions and the queues' backlogs read the partial indexes of queued and held executions (migration
0004), never the finished rows; workers are one row each; the due jobs read `next_run_at`."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from controlplane_adapters.executions.table import executions
from controlplane_adapters.jobs.sql import jobs
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.workers.sql import workers
from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.operations.entity import QueueBacklog
from controlplane_domain.workers.entity import WorkerStatus

S = ExecutionStatus
# literals, so that the partial indexes apply (table.py)
_QUEUED: sa.ColumnElement[str] = sa.literal_column(f"'{S.QUEUED.value}'")
_HELD: tuple[sa.ColumnElement[str], ...] = tuple(
    sa.literal_column(f"'{status.value}'") for status in (S.RUNNING, S.WAITING_FOR_INPUT)
)

QUEUED_COUNT = sa.select(sa.func.count()).select_from(executions).where(executions.c.status == _QUEUED)
HELD_COUNTS = (
    sa.select(executions.c.status, sa.func.count()).where(executions.c.status.in_(_HELD)).group_by(executions.c.status)
)
BACKLOGS = (
    sa.select(
        executions.c.organization_id,
        executions.c.worker_queue_id,
        sa.func.count(),
        sa.func.min(executions.c.queued_at),
    )
    .where(executions.c.status == _QUEUED)
    .group_by(executions.c.organization_id, executions.c.worker_queue_id)
)
HEARTBEATS = sa.select(workers.c.status, workers.c.heartbeat_interval_seconds, workers.c.last_heartbeat_at)
DUE = sa.select(sa.func.min(jobs.c.next_run_at)).where(
    jobs.c.enabled.is_(True), jobs.c.next_run_at <= sa.bindparam("now", type_=jobs.c.next_run_at.type)
)


class SqlOperationsRepository:
    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def live_executions(self) -> dict[ExecutionStatus, int]:
        counts = {S.QUEUED: (await self.connection.execute(QUEUED_COUNT)).scalar_one()}
        for status, count in (await self.connection.execute(HELD_COUNTS)).all():
            counts[S(status)] = count
        return counts

    async def queue_backlogs(self) -> list[QueueBacklog]:
        rows = (await self.connection.execute(BACKLOGS)).all()
        return [QueueBacklog(org, queue, count, oldest) for org, queue, count, oldest in rows]

    async def worker_heartbeats(self) -> list[tuple[WorkerStatus, int, datetime]]:
        rows = (await self.connection.execute(HEARTBEATS)).all()
        return [(WorkerStatus(status), interval, last) for status, interval, last in rows]

    async def earliest_due_firing(self, now: datetime) -> datetime | None:
        due: datetime | None = (await self.connection.execute(DUE, {"now": now})).scalar_one()
        return due
