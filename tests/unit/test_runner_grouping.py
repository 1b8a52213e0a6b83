"""Grouping workers into runners: names, effective statuses, capacity, versions, order."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from controlplane_domain.runners.grouping import capacity_of, group_runners, runner_name
from controlplane_domain.workers.entity import Worker, WorkerStatus

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def worker(worker_id: str, metadata: dict[str, Any] | None = None, *, seen: int = 0, **fields: Any) -> Worker:
    return Worker(
        worker_id=worker_id,
        organization_id="org",
        environment_name=fields.pop("environment_name", "prod"),
        status=fields.pop("status", WorkerStatus.IDLE),
        tasks_processed=fields.pop("tasks_processed", 0),
        current_task_id=None,
        worker_metadata=metadata or {},
        heartbeat_interval_seconds=10,
        registered_at=T0 + timedelta(seconds=seen - 100),
        last_heartbeat_at=T0 + timedelta(seconds=seen),
        **fields,
    )


def test_the_name_is_runner_then_hostname_then_the_worker_id() -> None:
    assert runner_name(worker("w", {"runner": "r", "hostname": "h"})) == "r"
    assert runner_name(worker("w", {"runner": "", "hostname": "h"})) == "h"
    assert runner_name(worker("w", {"runner": 7, "hostname": " "})) == "w"
    assert runner_name(worker("w", {"runner": "Rack A "})) == "Rack A "  # kept as written


def test_capacity_is_capacity_then_max_concurrency_then_one() -> None:
    assert capacity_of(worker("w", {"capacity": 3, "max_concurrency": 8})) == 3
    assert capacity_of(worker("w", {"capacity": 0, "max_concurrency": 8})) == 8
    assert capacity_of(worker("w", {"capacity": True, "max_concurrency": "8"})) == 1
    assert capacity_of(worker("w", {"capacity": 2.5})) == 1


def test_offline_workers_count_under_their_status_and_add_no_capacity() -> None:
    now = T0 + timedelta(seconds=60)
    workers = [
        worker("silent", {"hostname": "h", "capacity": 5, "version": "1"}, seen=0, tasks_processed=4),  # offline
        worker("busy", {"hostname": "h", "capacity": 2, "version": "2"}, seen=55, status=WorkerStatus.BUSY),
        worker("draining", {"hostname": "h"}, seen=50, status=WorkerStatus.DRAINING, environment_name="dev"),
    ]
    (runner,) = group_runners(workers, now)
    assert runner.status_counts == {"active": 0, "idle": 0, "busy": 1, "draining": 1, "offline": 1}
    assert (runner.worker_count, runner.capacity, runner.tasks_processed) == (3, 3, 4)
    assert runner.versions == {"1": 1, "2": 1}
    assert runner.environment_names == ["dev", "prod"]
    assert runner.first_registered_at == T0 - timedelta(seconds=100)
    assert runner.last_heartbeat_at == now - timedelta(seconds=5)
    assert runner.queue_ids == []


def test_runners_are_ordered_by_name_in_code_point_order() -> None:
    names = ["b", "B", "a", "Z", "é", "10", "9"]
    runners = group_runners([worker(f"w{i}", {"runner": n}) for i, n in enumerate(names)], T0)
    assert [r.name for r in runners] == sorted(names)
    assert runners[0].worker_ids == [f"w{names.index('10')}"]
    assert group_runners([], T0) == []
    same = group_runners([worker("x", {"runner": "r"}), replace(worker("y"), worker_metadata={"runner": "r"})], T0)
    assert [(r.name, r.worker_count) for r in same] == [("r", 2)]
