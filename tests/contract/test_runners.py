"""Runners on every store: the workers a runners' read sees (newest first, bounded, scoped), grouped by runner."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from controlplane_domain.runners.grouping import group_runners
from controlplane_domain.workers.entity import WorkerStatus
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import T0, worker


async def test_recent_is_newest_first_bounded_and_scoped(uow: UowFactory) -> None:
    async with uow() as work:
        await work.workers.save(worker("w-old", at=0))
        await work.workers.save(worker("w-new", at=5))
        await work.workers.save(worker("w-tie-b", at=3))
        await work.workers.save(worker("w-tie-a", at=3))
        await work.workers.save(worker("w-theirs", "org-b", at=9))
        await work.commit()
    async with uow() as work:
        everything = await work.workers.recent("org-a", 100)
        two = await work.workers.recent("org-a", 2)
        none = await work.workers.recent("org-c", 100)
    assert [w.worker_id for w in everything] == ["w-new", "w-tie-a", "w-tie-b", "w-old"]
    assert [w.worker_id for w in two] == ["w-new", "w-tie-a"]
    assert none == []
    assert everything[0] == worker("w-new", at=5)  # every field as stored


async def test_stored_workers_group_by_runner_then_hostname_then_worker_id(uow: UowFactory) -> None:
    metadata = {
        "a1": {"runner": "rack-1", "hostname": "ignored", "version": "1.0", "capacity": 4},
        "a2": {"hostname": "rack-1", "version": "1.1", "max_concurrency": 2},
        "b1": {"hostname": "host-b", "runner": "  ", "version": 2},  # a blank runner and a number are ignored
        "c1": {"kind": "plain"},
    }
    async with uow() as work:
        for index, (worker_id, data) in enumerate(metadata.items()):
            stored = replace(worker(worker_id, at=index), worker_metadata=data, queue_id=f"q-{worker_id[0]}")
            await work.workers.save(stored)
        await work.workers.save(replace(worker("theirs", "org-b"), worker_metadata={"runner": "rack-1"}))
        await work.commit()
    async with uow() as work:
        workers = await work.workers.recent("org-a", 100)
    runners = group_runners(workers, T0 + timedelta(seconds=10))
    assert [r.name for r in runners] == ["c1", "host-b", "rack-1"]
    rack = runners[2]
    assert (rack.worker_ids, rack.worker_count, rack.capacity) == (["a1", "a2"], 2, 6)
    assert (rack.versions, rack.queue_ids, rack.organization_id) == ({"1.0": 1, "1.1": 1}, ["q-a"], "org-a")
    assert rack.status_counts == {"active": 2, "idle": 0, "busy": 0, "draining": 0, "offline": 0}
    assert (runners[0].capacity, runners[1].versions) == (1, {})
    assert runners[1].status_counts[WorkerStatus.ACTIVE] == 1
