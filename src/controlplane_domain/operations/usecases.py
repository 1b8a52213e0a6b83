"""Operations' use cases: the gauges read when metrics are scraped."""

from __future__ import annotations

from collections import Counter

from controlplane_domain.environments.entity import MISSED_HEARTBEATS_BEFORE_OFFLINE
from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.operations.entity import FleetGauges
from controlplane_domain.ports import Ports
from controlplane_domain.workers.entity import WorkerStatus

LIVE_STATUSES = (ExecutionStatus.QUEUED, ExecutionStatus.RUNNING, ExecutionStatus.WAITING_FOR_INPUT)


async def read_gauges(ports: Ports) -> FleetGauges:
    """Live executions, queues' backlogs, workers by effective status (offline after missed heartbeats) and the
    scheduler's lag, in one read-only unit of work. Every status is present (0 when none)."""
    now = ports.clock.now()
    async with ports.read() as uow:
        live = await uow.operations.live_executions()
        queues = await uow.operations.queue_backlogs()
        sightings = await uow.operations.worker_heartbeats()
        due = await uow.operations.earliest_due_firing(now)
    workers: Counter[str] = Counter({status.value: 0 for status in WorkerStatus})
    for status, interval, last in sightings:
        silent = (now - last).total_seconds() > interval * MISSED_HEARTBEATS_BEFORE_OFFLINE
        workers[WorkerStatus.OFFLINE.value if silent else status.value] += 1
    return FleetGauges(
        executions={status.value: live.get(status, 0) for status in LIVE_STATUSES},
        queues=sorted(queues, key=lambda backlog: (backlog.organization_id, backlog.worker_queue_id)),
        workers=dict(workers),
        scheduler_lag_seconds=0.0 if due is None else max(0.0, (now - due).total_seconds()),
        now=now,
    )
