"""Environments and their worker queues on the wire."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.environments.entity import MAX_QUEUE_WORKERS, EnvironmentStatus, QueueStatus
from controlplane_wire.base import Name, OrganizationResource, Page, Request

Interval = Annotated[int, Meta(ge=1, le=3600)]
MaxWorkers = Annotated[int, Meta(ge=1, le=MAX_QUEUE_WORKERS)]


class EnvironmentCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    status: EnvironmentStatus = EnvironmentStatus.ACTIVE
    variables: dict[str, str] = {}
    metadata: dict[str, Any] = {}


class EnvironmentUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    status: EnvironmentStatus | UnsetType = UNSET
    variables: dict[str, str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET


class Environment(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    status: EnvironmentStatus
    variables: dict[str, str]
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class EnvironmentList(Page[Environment]):
    items: list[Environment]


class WorkerQueueCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    status: QueueStatus = QueueStatus.ACTIVE
    max_workers: MaxWorkers | None = None
    heartbeat_interval_seconds: Interval = 30


class WorkerQueueUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    status: QueueStatus | UnsetType = UNSET
    max_workers: MaxWorkers | UnsetType | None = UNSET
    heartbeat_interval_seconds: Interval | UnsetType = UNSET


class WorkerQueue(OrganizationResource, kw_only=True):
    environment_id: str
    name: str
    description: str | None
    status: QueueStatus
    max_workers: int | None
    heartbeat_interval_seconds: int
    active_workers: int
    queued_executions: int
    created_at: datetime
    updated_at: datetime


class WorkerQueueList(Page[WorkerQueue]):
    items: list[WorkerQueue]
