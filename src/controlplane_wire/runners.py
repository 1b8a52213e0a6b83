"""Runner wire types."""

from __future__ import annotations

from datetime import datetime

import msgspec

from controlplane_wire.base import Page


class StatusCounts(msgspec.Struct, kw_only=True):
    """The runner's workers by effective status (a worker silent for three intervals counts as `offline`)."""

    active: int
    idle: int
    busy: int
    draining: int
    offline: int


class Runner(msgspec.Struct, kw_only=True):
    name: str
    organization_id: str
    worker_count: int
    status_counts: StatusCounts
    worker_ids: list[str]
    queue_ids: list[str]
    environment_names: list[str]
    versions: dict[str, int]
    capacity: int
    tasks_processed: int
    first_registered_at: datetime
    last_heartbeat_at: datetime


class RunnerList(Page[Runner]):
    items: list[Runner]
