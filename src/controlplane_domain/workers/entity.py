"""Workers: registered by their first heartbeat, offline after three missed intervals."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from controlplane_domain.config import JSONObject
from controlplane_domain.environments.entity import MISSED_HEARTBEATS_BEFORE_OFFLINE

MAX_TASKS_PROCESSED = 2**63 - 1  # a signed 64-bit count: what every store keeps


class WorkerStatus(StrEnum):
    ACTIVE = "active"
    IDLE = "idle"
    BUSY = "busy"
    DRAINING = "draining"
    OFFLINE = "offline"


@dataclass(frozen=True, slots=True, kw_only=True)
class Worker:
    """A remote process that runs executions; `status` is what it last reported."""

    worker_id: str
    organization_id: str
    environment_name: str
    status: WorkerStatus
    tasks_processed: int
    current_task_id: str | None
    worker_metadata: JSONObject = field(default_factory=dict)
    heartbeat_interval_seconds: int
    registered_at: datetime
    last_heartbeat_at: datetime
    queue_id: str | None = None

    def effective_status(self, now: datetime) -> WorkerStatus:
        """The reported status, or `offline` once three intervals pass without a heartbeat."""
        silence = timedelta(seconds=self.heartbeat_interval_seconds * MISSED_HEARTBEATS_BEFORE_OFFLINE)
        if now - self.last_heartbeat_at > silence:
            return WorkerStatus.OFFLINE
        return self.status
