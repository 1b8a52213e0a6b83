"""A queue's active workers on every store: heard from recently, and not the ones that reported `offline`."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from controlplane_domain.workers.entity import WorkerStatus
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import T0, worker


async def test_a_worker_that_reported_offline_is_not_active_at_once(uow: UowFactory) -> None:
    since = T0 + timedelta(seconds=10)
    fleet = [
        replace(worker("on", at=20), queue_id="q1"),
        replace(worker("draining", at=20), queue_id="q1", status=WorkerStatus.DRAINING),
        replace(worker("said-offline", at=20), queue_id="q1", status=WorkerStatus.OFFLINE),  # just now
        replace(worker("silent", at=5), queue_id="q1"),  # last heard before `since`
        replace(worker("at-the-edge", at=10), queue_id="q2", status=WorkerStatus.BUSY),
        replace(worker("elsewhere", at=20), queue_id="q3"),
        replace(worker("theirs", "org-b", at=20), queue_id="q1"),
    ]
    async with uow() as work:
        for one in fleet:
            assert await work.workers.register(one)
        await work.commit()
    async with uow() as work:
        counts = await work.workers.count_active("org-a", ["q1", "q2", "q-none"], since)
        nothing = await work.workers.count_active("org-a", [], since)
    assert counts == {"q1": 2, "q2": 1}
    assert nothing == {}
    back = replace(fleet[2], status=WorkerStatus.IDLE, last_heartbeat_at=T0 + timedelta(seconds=21))
    async with uow() as work:
        await work.workers.save(back)  # it came back
        await work.commit()
    async with uow() as work:
        assert await work.workers.count_active("org-a", ["q1"], since) == {"q1": 3}
