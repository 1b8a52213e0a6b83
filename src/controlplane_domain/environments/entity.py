"""Environments and the worker queues inside them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.config import JSONObject

MAX_QUEUE_WORKERS = 2**31 - 1  # a signed 32-bit count: what every store keeps
MISSED_HEARTBEATS_BEFORE_OFFLINE = 3
"""A queue's workers heartbeat every `heartbeat_interval_seconds`; one silent for this many intervals is offline."""


class EnvironmentStatus(StrEnum):
    ACTIVE = "active"
    INACTIVE = "inactive"


class QueueStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    DRAINING = "draining"


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """A place where workers run (a cluster, a region, a sandbox); owns worker queues."""

    audited: ClassVar[Audited] = Audited("environment")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    description: str | None
    status: EnvironmentStatus
    variables: dict[str, str]
    metadata: JSONObject
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerQueue:
    """A queue of executions in an environment; workers lease from it. Paused queues hand out no work."""

    audited: ClassVar[Audited] = Audited("worker_queue")
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    environment_id: str
    name: str
    description: str | None
    status: QueueStatus
    max_workers: int | None
    heartbeat_interval_seconds: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class QueueView:
    """A queue with its live counts."""

    queue: WorkerQueue
    active_workers: int
    queued_executions: int
