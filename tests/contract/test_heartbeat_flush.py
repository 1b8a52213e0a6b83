"""The heartbeat flush on the SQL stores: a report the store refuses is dropped without holding back the others."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_domain.ports import Ports
from controlplane_domain.workers import usecases as workers
from controlplane_domain.workers.flushing import flush_heartbeats
from controlplane_domain.workers.heartbeats import HeartbeatBuffer
from tests.contract.conftest import UowFactory


@pytest.mark.parametrize("uow", ["sqlite", "postgres"], indirect=True)
async def test_a_report_the_store_refuses_does_not_hold_back_the_others(uow: UowFactory) -> None:
    buffer = HeartbeatBuffer()
    ports = Ports(uow=uow, clock=ManualClock(), ids=UuidGenerator(), heartbeats=buffer)
    registered = {}
    for worker_id in ("bad", "good"):  # registrations are written at once
        beat = workers.RecordHeartbeat(worker_id=worker_id, environment_name="e")
        registered[worker_id] = (await workers.record_heartbeat(ports, "org", beat)).worker
    # a report no store can hold (input checks keep such values out; this one got in some other way)
    buffer.hold(replace(registered["bad"], tasks_processed=2**64))
    buffer.hold(replace(registered["good"], tasks_processed=7))

    assert await flush_heartbeats(ports) == 1
    assert len(buffer) == 0, "the refused report is dropped, not retried at every flush"
    async with uow() as work:
        good, bad = await work.workers.get("org", "good"), await work.workers.get("org", "bad")
    assert good is not None
    assert good.tasks_processed == 7
    assert bad == registered["bad"]
    buffer.hold(replace(registered["good"], tasks_processed=8))
    assert await flush_heartbeats(ports) == 1
