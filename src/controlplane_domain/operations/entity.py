"""Operations: the service's state as an operator's dashboard reads it, across every organization."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class QueueBacklog:
    """The executions waiting on one worker queue: how many, and since when the oldest waits."""

    organization_id: str
    worker_queue_id: str
    depth: int
    oldest_queued_at: datetime | None


@dataclass(frozen=True, slots=True)
class FleetGauges:
    """What is true now: live executions by status, queues' backlogs, workers by (effective) status, and how late
    the job scheduler runs (seconds past the earliest due firing not fired yet; 0 when nothing is due)."""

    executions: dict[str, int] = field(default_factory=dict)
    queues: list[QueueBacklog] = field(default_factory=list)
    workers: dict[str, int] = field(default_factory=dict)
    scheduler_lag_seconds: float = 0.0
    now: datetime | None = None
