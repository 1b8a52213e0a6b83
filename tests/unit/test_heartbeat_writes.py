"""Heartbeat writes are bounded. Without a buffer, a worker repeating itself within a second costs no write
and every change is recorded at once; with one (write-behind, as the service runs), known workers' reports
wait for the next flush, reads see them at once, and registrations and lease renewals are written through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Self

from controlplane_adapters.clock import ManualClock
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.executions import execute, leases, queries
from controlplane_domain.executions.entity import TargetType
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.workers import usecases as workers
from controlplane_domain.workers.entity import Worker, WorkerStatus
from controlplane_domain.workers.flushing import FLUSH_BATCH, flush_heartbeats
from controlplane_domain.workers.heartbeats import HeartbeatBuffer
from controlplane_runtime.tasks import flush_batch
from tests.support import memory_ports


async def test_repeated_heartbeats_within_a_second_write_once() -> None:
    clock = ManualClock()
    ports = memory_ports(clock)
    beat = workers.RecordHeartbeat(worker_id="w", environment_name="e", tasks_processed=1)
    first = await workers.record_heartbeat(ports, "org", beat)
    clock.advance(0.4)
    second = await workers.record_heartbeat(ports, "org", beat)
    assert second.worker.last_heartbeat_at == first.worker.last_heartbeat_at, "nothing written"
    stored = await workers.get_worker(ports, "org", "w")
    assert clock.now() - stored.last_heartbeat_at < workers.LAST_SEEN_PRECISION
    clock.advance(0.7)
    third = await workers.record_heartbeat(ports, "org", beat)
    assert (await workers.get_worker(ports, "org", "w")).last_heartbeat_at == third.received_at
    changed = workers.RecordHeartbeat(worker_id="w", environment_name="e", tasks_processed=2)
    await workers.record_heartbeat(ports, "org", changed)
    assert (await workers.get_worker(ports, "org", "w")).tasks_processed == 2, "a change is written at once"


async def stored_worker(ports: Ports, worker_id: str) -> Worker | None:
    """The worker as the store has it (what another process would read), not as this process reports it."""
    async with ports.read() as uow:
        return await uow.workers.get("org", worker_id)


async def test_write_behind_reports_are_visible_at_once_and_written_by_the_flush() -> None:
    clock = ManualClock()
    ports = memory_ports(clock, write_behind=True)
    first = await workers.record_heartbeat(ports, "org", workers.RecordHeartbeat(worker_id="w", environment_name="e"))
    assert first.registered
    assert await stored_worker(ports, "w") == first.worker, "a registration is written at once"
    for count in (1, 2, 3):
        clock.advance(0.2)
        beat = workers.RecordHeartbeat(worker_id="w", environment_name="e", tasks_processed=count)
        receipt = await workers.record_heartbeat(ports, "org", beat)
        assert not receipt.registered
        assert receipt.worker.last_heartbeat_at == clock.now()
    seen = await workers.get_worker(ports, "org", "w")
    listed = (await workers.list_workers(ports, "org", PageRequest())).items
    assert (seen.tasks_processed, seen.last_heartbeat_at) == (3, clock.now()), "reads see the latest report"
    assert listed == [seen]
    assert (await stored_worker(ports, "w")) == first.worker, "nothing written before the flush"
    assert await flush_heartbeats(ports) == 1
    assert await stored_worker(ports, "w") == seen
    assert seen.registered_at == first.worker.registered_at
    assert await flush_heartbeats(ports) == 0, "nothing left to write"


async def test_write_behind_renews_a_held_lease_at_once() -> None:
    clock = ManualClock()
    ports = memory_ports(clock, write_behind=True)
    agent = await agents.create_agent(ports, "org", agents.CreateAgent(name="a"))
    environment = await environments.create_environment(ports, "org", environments.CreateEnvironment(name="e"))
    queue = await environments.create_queue(ports, "org", environment.id, environments.CreateQueue(name="q"))
    await workers.record_heartbeat(ports, "org", workers.RecordHeartbeat(worker_id="w", environment_name="e"))
    command = execute.ExecuteCommand(prompt="p", worker_queue_id=queue.queue.id)
    execution = await execute.execute(ports, "org", TargetType.AGENT, agent.id, command)
    lease = await leases.try_lease(ports, "org", queue.queue.id, "w")
    assert lease is not None
    assert lease.execution.lease_expires_at is not None
    clock.advance(10)
    receipt = await workers.record_heartbeat(ports, "org", workers.RecordHeartbeat(worker_id="w", environment_name="e"))
    assert receipt.leases_extended == 1
    renewed = await queries.get_execution(ports, "org", execution.id)
    assert renewed.lease_expires_at == clock.now() + timedelta(seconds=ports.lease_timeout_seconds)
    assert await stored_worker(ports, "w") == receipt.worker, "written through with the renewal"
    assert receipt.worker.queue_id == queue.queue.id


async def test_a_lease_on_another_queue_is_not_undone_by_a_waiting_report() -> None:
    clock = ManualClock()
    ports = memory_ports(clock, write_behind=True)
    environment = await environments.create_environment(ports, "org", environments.CreateEnvironment(name="e"))
    queue = await environments.create_queue(ports, "org", environment.id, environments.CreateQueue(name="q"))
    beat = workers.RecordHeartbeat(worker_id="w", environment_name="e")
    await workers.record_heartbeat(ports, "org", beat)
    clock.advance(0.1)
    await workers.record_heartbeat(ports, "org", beat)  # waits in the buffer, with no queue
    assert await leases.try_lease(ports, "org", queue.queue.id, "w") is None  # polls the queue: moves there
    await flush_heartbeats(ports)
    stored = await stored_worker(ports, "w")
    assert stored is not None
    assert stored.queue_id == queue.queue.id


def test_a_failed_flush_gives_back_only_what_no_newer_report_replaced() -> None:
    buffer = HeartbeatBuffer()
    first = worker_at("a", 1), worker_at("b", 1)
    for each in first:
        buffer.hold(each)
    drained = buffer.drain()
    assert sorted(w.worker_id for w in drained) == ["a", "b"]
    assert len(buffer) == 0
    buffer.hold(worker_at("b", 2))  # arrived while the flush was failing
    buffer.restore(drained)
    assert buffer.latest("org", "a") == worker_at("a", 1)
    assert buffer.latest("org", "b") == worker_at("b", 2)
    buffer.hold(worker_at("b", 1))
    assert buffer.latest("org", "b") == worker_at("b", 2), "an older report never replaces a newer one"
    buffer.written(worker_at("b", 3))
    assert buffer.latest("org", "b") is None, "a write-through supersedes the waiting report"


class HeldFlush:
    """The flush's unit of work: it takes the reports, then its commit waits until `released` before writing them
    to the store. (The memory store runs one unit of work at a time: a real one held open would hold the reads
    too; on SQLite and Postgres a flush's transaction under way leaves reads to the rows as they were.)"""

    def __init__(self, make: Callable[[], UnitOfWork]) -> None:
        self.make = make
        self.workers = self
        self.reports: list[Worker] = []
        self.waiting = asyncio.Event()
        self.released = asyncio.Event()

    def __call__(self) -> Any:
        return self

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def save_reports(self, reports: Sequence[Worker]) -> None:
        self.reports = list(reports)

    async def commit(self) -> None:
        self.waiting.set()
        await self.released.wait()
        async with self.make() as uow:
            await uow.workers.save_reports(self.reports)
            await uow.commit()


async def test_reads_see_a_report_while_its_flush_is_under_way() -> None:
    """The flush took the waiting report, and its transaction has not committed yet: a read of the worker (alone,
    in a list, in the runners) answers the report, not the row as it was before it (on a busy machine a read
    came in between, and answered `active`, no task, where the worker had just reported `busy`)."""
    clock = ManualClock()
    ports = memory_ports(clock, write_behind=True)
    await workers.record_heartbeat(ports, "org", workers.RecordHeartbeat(worker_id="w", environment_name="e"))
    clock.advance(5)
    busy = workers.RecordHeartbeat(worker_id="w", environment_name="e", status=WorkerStatus.BUSY,
                                   current_task_id="task-9", tasks_processed=7)  # fmt: skip
    await workers.record_heartbeat(ports, "org", busy)
    held = HeldFlush(ports.uow)
    flush = asyncio.ensure_future(flush_heartbeats(replace(ports, uow=held)))
    await asyncio.wait_for(held.waiting.wait(), 60)  # (an outer guard: the flush is at its commit at once)
    seen = await workers.get_worker(ports, "org", "w")
    assert (seen.status, seen.current_task_id, seen.tasks_processed) == (WorkerStatus.BUSY, "task-9", 7)
    assert (await workers.list_workers(ports, "org", PageRequest())).items == [seen]
    held.released.set()
    assert await asyncio.wait_for(flush, 60) == 1
    assert await stored_worker(ports, "w") == seen
    assert await workers.get_worker(ports, "org", "w") == seen, "written: the store's row answers"
    assert ports.heartbeats is not None
    assert ports.heartbeats.latest("org", "w") is None, "nothing in flight once the flush has ended"


def test_a_report_flushed_while_a_read_was_under_way_answers_that_read() -> None:
    """A read that took its snapshot of the buffer, then read a row the flush had not committed yet, answers the
    report it saw in the buffer, even when the flush has ended since (neither the buffer nor its row have it)."""
    buffer = HeartbeatBuffer()
    buffer.hold(worker_at("a", 2))
    earlier = buffer.snapshot()
    reports = buffer.drain()
    buffer.settle(reports)  # written and settled after the read's snapshot
    assert buffer.latest("org", "a") is None
    assert buffer.overlay([worker_at("a", 1)], earlier) == [worker_at("a", 2)], "the row read was the older one"
    assert buffer.overlay([worker_at("a", 3)], earlier) == [worker_at("a", 3)], "a newer row wins"
    assert buffer.newest(worker_at("a", 1), worker_at("a", 2)) == worker_at("a", 2)


def worker_at(worker_id: str, second: int) -> Worker:
    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=second)
    return Worker(
        worker_id=worker_id,
        organization_id="org",
        environment_name="e",
        status=WorkerStatus.ACTIVE,
        tasks_processed=second,
        current_task_id=None,
        heartbeat_interval_seconds=30,
        registered_at=at,
        last_heartbeat_at=at,
    )


async def test_a_large_flush_in_batches_lets_requests_run_between_them() -> None:
    clock = ManualClock()
    ports = memory_ports(clock, write_behind=True)
    for n in range(5):  # registered (written at once), then a report each that waits for the flush
        await workers.record_heartbeat(ports, "org", workers.RecordHeartbeat(worker_id=f"w{n}", environment_name="e"))
    clock.advance(1)
    for n in range(5):
        beat = workers.RecordHeartbeat(worker_id=f"w{n}", environment_name="e", tasks_processed=7)
        await workers.record_heartbeat(ports, "org", beat)
    seen_meanwhile: list[int] = []

    async def a_request_meanwhile() -> None:
        stored = [await stored_worker(ports, f"w{n}") for n in range(5)]
        seen_meanwhile.append(sum(1 for worker in stored if worker is not None and worker.tasks_processed == 7))

    flush = asyncio.ensure_future(flush_heartbeats(ports, batch=2))
    request = asyncio.ensure_future(a_request_meanwhile())
    assert await flush == 5
    await request
    assert seen_meanwhile == [2], "the request ran after the first batch of two, before the rest"
    stored = [await stored_worker(ports, f"w{n}") for n in range(5)]
    assert [None if worker is None else worker.tasks_processed for worker in stored] == [7] * 5


def test_the_stores_that_write_in_the_loops_thread_flush_in_batches() -> None:
    """The memory store and SQLite hold the event loop while they write: their flush goes in batches, with requests
    in between (above); Postgres's writes wait on the network and hold nothing: one transaction."""
    assert flush_batch("memory://") == FLUSH_BATCH
    assert flush_batch("sqlite+aiosqlite:///control.db") == FLUSH_BATCH
    assert flush_batch("postgresql+asyncpg://postgres@127.0.0.1:5432/controlplane") is None
