"""How workers make runners: the group a worker belongs to, and what a group adds up to.

A worker's runner is the `runner` of its `worker_metadata`, else its `hostname`, else its own worker id (a worker
that names no host is one process on a host we cannot name: lumping such workers together would claim they share
a host and add up capacities that mean nothing). Only non-blank strings name a runner; any other value is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from controlplane_domain.workers.entity import Worker, WorkerStatus

NAME_KEYS = ("runner", "hostname")  # the metadata keys that name a worker's runner, first found wins
VERSION_KEY = "version"
CAPACITY_KEYS = ("capacity", "max_concurrency")  # the executions a worker runs at once, first valid wins
DEFAULT_CAPACITY = 1  # a worker that says nothing runs one execution at a time (as the reference worker does)


@dataclass(frozen=True, slots=True, kw_only=True)
class Runner:
    """A runner as read now: its workers' statuses are their effective ones (offline after missed heartbeats)."""

    name: str
    organization_id: str
    worker_count: int
    status_counts: dict[str, int]
    worker_ids: list[str]
    queue_ids: list[str]
    environment_names: list[str]
    versions: dict[str, int]
    capacity: int
    tasks_processed: int
    first_registered_at: datetime
    last_heartbeat_at: datetime


def _text(metadata: Mapping[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    return value if isinstance(value, str) and value.strip() else None


def runner_name(worker: Worker) -> str:
    """The runner `worker` is grouped under."""
    for key in NAME_KEYS:
        name = _text(worker.worker_metadata, key)
        if name is not None:
            return name
    return worker.worker_id


def capacity_of(worker: Worker) -> int:
    """The executions the worker says it runs at once: `capacity`, else `max_concurrency` (integers of 1 or more;
    anything else is ignored), else 1."""
    for key in CAPACITY_KEYS:
        value = worker.worker_metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return DEFAULT_CAPACITY


def _runner(name: str, workers: list[Worker], now: datetime) -> Runner:
    statuses = {status.value: 0 for status in WorkerStatus}
    versions: dict[str, int] = {}
    capacity = 0
    for worker in workers:
        status = worker.effective_status(now)
        statuses[status.value] += 1
        if status is not WorkerStatus.OFFLINE:
            capacity += capacity_of(worker)
        version = _text(worker.worker_metadata, VERSION_KEY)
        if version is not None:
            versions[version] = versions.get(version, 0) + 1
    return Runner(
        name=name,
        organization_id=workers[0].organization_id,
        worker_count=len(workers),
        status_counts=statuses,
        worker_ids=sorted(worker.worker_id for worker in workers),
        queue_ids=sorted({worker.queue_id for worker in workers if worker.queue_id is not None}),
        environment_names=sorted({worker.environment_name for worker in workers}),
        versions=dict(sorted(versions.items())),
        capacity=capacity,
        tasks_processed=sum(worker.tasks_processed for worker in workers),
        first_registered_at=min(worker.registered_at for worker in workers),
        last_heartbeat_at=max(worker.last_heartbeat_at for worker in workers),
    )


def group_runners(workers: Iterable[Worker], now: datetime) -> list[Runner]:
    """The runners of `workers`, ordered by name (code point order, the same on every store)."""
    groups: dict[str, list[Worker]] = {}
    for worker in workers:
        groups.setdefault(runner_name(worker), []).append(worker)
    return [_runner(name, groups[name], now) for name in sorted(groups)]
