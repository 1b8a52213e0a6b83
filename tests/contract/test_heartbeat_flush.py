"""The heartbeat flush on the SQL stores: a report the store refuses is dropped without holding back the others."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.workers.sql import REPORTS_A_STATEMENT
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


@pytest.mark.parametrize("uow", ["sqlite", "postgres"], indirect=True)
async def test_a_flush_of_more_reports_than_a_statement_takes_writes_them_all_or_none(uow: UowFactory) -> None:
    """`save_reports` writes in statements of REPORTS_A_STATEMENT rows, all in the flush's one transaction."""
    buffer = HeartbeatBuffer()
    ports = Ports(uow=uow, clock=ManualClock(), ids=UuidGenerator(), heartbeats=buffer)
    beat = workers.RecordHeartbeat(worker_id="first", environment_name="e")
    first = (await workers.record_heartbeat(ports, "org", beat)).worker
    count = 2 * REPORTS_A_STATEMENT + 1
    fleet = [replace(first, worker_id=f"w{n:04d}", tasks_processed=n) for n in range(count)]
    async with uow() as work:
        await work.workers.save_reports(fleet)
        await work.commit()
    async with uow() as work:
        stored = [await work.workers.get("org", f"w{n:04d}") for n in range(count)]
    assert [w.tasks_processed if w else None for w in stored] == list(range(count))

    later = [replace(w, tasks_processed=w.tasks_processed + 1) for w in fleet]
    later[-1] = replace(later[-1], tasks_processed=2**64)  # the last statement fails: none of the flush is kept
    with pytest.raises(Exception):  # noqa: B017, PT011 - the driver's overflow error, which differs by store
        async with uow() as work:
            await work.workers.save_reports(later)
            await work.commit()
    async with uow() as work:
        kept = await work.workers.get("org", "w0000")
    assert kept is not None
    assert kept.tasks_processed == 0
