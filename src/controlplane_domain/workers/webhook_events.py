"""The webhook event a worker's coming and going announces: `worker.status_changed`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from controlplane_domain.webhooks.entity import EventType
from controlplane_domain.webhooks.events import emit
from controlplane_domain.workers.entity import Worker, WorkerStatus

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork


async def worker_status_changed(
    ports: Ports, uow: UnitOfWork, previous: WorkerStatus | None, worker: Worker, now: datetime
) -> bool:
    """`worker.status_changed`: the worker came online (`previous` offline, or None: it registered) or went
    offline (it said so, or fell silent)."""
    data = {"worker_id": worker.worker_id, "environment_name": worker.environment_name,
            "status": worker.status.value, "previous_status": None if previous is None else previous.value,
            "online": worker.status.value != "offline", "queue_id": worker.queue_id,
            "last_heartbeat_at": worker.last_heartbeat_at.isoformat()}  # fmt: skip
    return await emit(ports, uow, worker.organization_id, EventType.WORKER_STATUS_CHANGED, data, now)
