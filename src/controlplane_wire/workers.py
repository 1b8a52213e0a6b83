"""Worker wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from controlplane_domain.workers.entity import MAX_TASKS_PROCESSED, WorkerStatus
from controlplane_wire.base import Page, Request
from controlplane_wire.configuration import zero_edges


class WorkerHeartbeat(Request, kw_only=True):
    worker_id: Annotated[str, Meta(min_length=1, max_length=255)]
    environment_name: Annotated[str, Meta(min_length=1, max_length=255)]
    status: WorkerStatus = WorkerStatus.ACTIVE
    tasks_processed: Annotated[int, Meta(ge=0, le=MAX_TASKS_PROCESSED, extra_json_schema=zero_edges(ge=0))] = 0
    current_task_id: str | None = None
    worker_metadata: dict[str, Any] = {}


class HeartbeatResponse(msgspec.Struct, kw_only=True):
    worker_id: str
    organization_id: str
    status: WorkerStatus
    registered: bool
    received_at: datetime
    heartbeat_interval_seconds: int
    offline_after_seconds: int
    leases_extended: int = 0
    commands: list[WorkerCommandOut] = []


class WorkerCommandOut(msgspec.Struct, kw_only=True):
    """Something the service asks the worker to do, e.g. `{"type": "cancel", "execution_id": ...}`."""

    type: str
    execution_id: str


class Worker(msgspec.Struct, kw_only=True):
    id: str
    worker_id: str
    organization_id: str
    environment_name: str
    status: WorkerStatus
    reported_status: WorkerStatus
    tasks_processed: int
    current_task_id: str | None
    worker_metadata: dict[str, Any]
    heartbeat_interval_seconds: int
    registered_at: datetime
    last_heartbeat_at: datetime
    queue_id: str | None = None


class WorkerList(Page[Worker]):
    items: list[Worker]
