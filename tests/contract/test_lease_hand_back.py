"""A lease that never reached its worker (it hung up) goes back to its queue without spending an attempt."""

# ruff: noqa: S608  (the holder's SQL names ids the tests generated)

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import ManualClock, SystemClock, UuidGenerator
from controlplane_adapters.sql.notify import asyncpg_dsn
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.executions import completion, execute, lease_ends, leases, queries
from controlplane_domain.executions.entity import EventType, ExecutionStatus, NewEvent, TargetType
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.workers import usecases as workers
from controlplane_domain.workers.entity import WorkerStatus
from tests.support import memory_ports

ORG = "org-a"
S = ExecutionStatus


async def _queued(ports: Ports) -> tuple[str, str]:
    """A queue holding one queued execution of an agent: (queue id, execution id)."""
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="a"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    queue = (await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))).queue
    command = execute.ExecuteCommand(prompt="do it", worker_queue_id=queue.id)
    execution = await execute.execute(ports, ORG, TargetType.AGENT, agent.id, command)
    return queue.id, execution.id


async def _statuses(ports: Ports, execution_id: str) -> list[tuple[str, int, str | None]]:
    page = await queries.list_events(ports, ORG, execution_id, PageRequest(limit=100, offset=0))
    return [
        (event.data["status"], event.data["attempt"], event.data.get("reason"))
        for event in page.items
        if event.type is EventType.STATUS
    ]


@pytest.mark.parametrize("cancels", [1, 2])
async def test_a_long_poll_cancelled_while_its_lease_is_recorded_hands_the_lease_back(
    postgres_engine: AsyncEngine, postgres_url: str, cancels: int
) -> None:
    """The worker hangs up (the server cancels its long poll) after the lease committed, while the worker's move to
    the queue waits for a lock: the execution is queued again at once (not when the lease expires; the attempt it
    took stays spent), and the next lease is attempt 2. Cancelled twice (the server's stop, then the worker's
    hang-up) alike."""
    ports = Ports(uow=lambda: SqlUnitOfWork(postgres_engine), clock=SystemClock(), ids=UuidGenerator())
    queue_id, execution_id = await _queued(ports)
    await workers.record_heartbeat(ports, ORG, workers.RecordHeartbeat(worker_id="w", environment_name="e"))
    holder = await asyncpg.connect(asyncpg_dsn(postgres_url))
    observer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    try:
        transaction = holder.transaction()
        await transaction.start()
        await holder.execute(f"SELECT 1 FROM workers WHERE organization_id = '{ORG}' AND worker_id = 'w' FOR UPDATE")
        polling = asyncio.ensure_future(leases.lease(ports, ORG, queue_id, "w", wait_seconds=5))
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        deadline = time.monotonic() + 10
        while not await observer.fetchval(query):  # the lease is committed; the worker's move waits for the holder
            assert time.monotonic() < deadline, "the lease never waited for the worker's row"
            await asyncio.sleep(0.01)
        for _ in range(cancels):
            polling.cancel()
            for _ in range(5):  # turns of the loop: the cancellation reaches the poll
                await asyncio.sleep(0)
        await transaction.commit()
        with pytest.raises(asyncio.CancelledError):
            await polling
    finally:
        await holder.close()
        await observer.close()
    handed = await queries.get_execution(ports, ORG, execution_id)
    assert (handed.status, handed.worker_id, handed.lease_expires_at) == (S.QUEUED, None, None)
    assert (handed.attempt, handed.max_attempts) == (1, 3)
    again = await leases.try_lease(ports, ORG, queue_id, "w2")
    assert again is not None
    assert (again.execution.id, again.execution.attempt) == (execution_id, 2)
    reason = "handed back: the worker hung up before the lease reached it"
    assert await _statuses(ports, execution_id) == [
        ("queued", 0, None), ("running", 1, None), ("queued", 1, reason), ("running", 2, None)
    ]  # fmt: skip


async def test_a_lease_handed_back_after_a_cancellation_was_asked_for_is_cancelled() -> None:
    ports = memory_ports(SystemClock())
    queue_id, execution_id = await _queued(ports)
    leased = await leases.try_lease(ports, ORG, queue_id, "w")
    assert leased is not None
    await completion.cancel(ports, ORG, execution_id)
    handed = await lease_ends.hand_back(ports, leased.execution)
    assert handed is not None
    assert (handed.status, handed.attempt) == (S.CANCELLED, 1)
    assert await leases.try_lease(ports, ORG, queue_id, "w") is None


async def test_a_lease_that_is_no_longer_current_is_not_handed_back() -> None:
    ports = memory_ports(SystemClock())
    queue_id, execution_id = await _queued(ports)
    leased = await leases.try_lease(ports, ORG, queue_id, "w")
    assert leased is not None
    done = completion.CompleteCommand(worker_id="w", attempt=1, status=S.COMPLETED, response="ok")
    await completion.complete(ports, ORG, execution_id, done)
    handed = await lease_ends.hand_back(ports, leased.execution)
    assert handed is not None
    assert (handed.status, handed.attempt, handed.response) == (S.COMPLETED, 1, "ok")


def _offline(worker_id: str) -> workers.RecordHeartbeat:
    return workers.RecordHeartbeat(worker_id=worker_id, environment_name="e", status=WorkerStatus.OFFLINE)


async def test_a_worker_going_offline_gives_back_a_lease_it_never_read() -> None:
    """A worker stopped as its lease was answered (it never read the answer) says it goes offline: the execution
    is queued again at once, not after the lease expires."""
    ports = memory_ports(SystemClock())
    queue_id, execution_id = await _queued(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w") is not None
    await workers.record_heartbeat(ports, ORG, _offline("w"))
    handed = await queries.get_execution(ports, ORG, execution_id)
    assert (handed.status, handed.attempt, handed.max_attempts, handed.worker_id) == (S.QUEUED, 1, 3, None)
    assert (await _statuses(ports, execution_id))[-1] == ("queued", 1, lease_ends.WENT_OFFLINE)


@pytest.mark.parametrize(
    ("max_attempts", "status", "attempt", "worker"), [(3, S.QUEUED, 1, None), (1, S.FAILED, 1, "w")]
)
async def test_a_worker_going_offline_gives_back_a_lease_it_started(
    max_attempts: int, status: S, attempt: int, worker: str | None
) -> None:
    """(A failed execution keeps the worker that last held it, as the reaper leaves it.)"""
    ports = replace(memory_ports(SystemClock()), max_attempts=max_attempts)
    queue_id, execution_id = await _queued(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w") is not None
    started = [NewEvent(type=EventType.MESSAGE_CHUNK, data={"text": "hel"})]
    await completion.append_events(ports, ORG, execution_id, "w", 1, started)
    await workers.record_heartbeat(ports, ORG, _offline("w"))
    handed = await queries.get_execution(ports, ORG, execution_id)
    assert (handed.status, handed.attempt, handed.worker_id) == (status, attempt, worker)
    assert handed.max_attempts == max_attempts


@pytest.mark.parametrize("names_it", [False, True])
async def test_an_idle_worker_gives_back_the_leases_it_holds_but_a_young_one(names_it: bool) -> None:
    """A worker reports itself idle while it holds a lease from a while ago: the lease's answer never reached it,
    and its heartbeats would renew the lease forever. That lease goes back; one taken a moment ago (its answer may
    still be on its way) stays, and so does one the heartbeat names as its current task."""
    clock = ManualClock()
    ports = memory_ports(clock)
    queue_id, old_id = await _queued(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w") is not None
    clock.advance(workers.IDLE_GRACE_SECONDS + 1)
    agent_id = (await queries.get_execution(ports, ORG, old_id)).agent_id
    assert agent_id is not None
    command = execute.ExecuteCommand(prompt="young", worker_queue_id=queue_id)
    young = await execute.execute(ports, ORG, TargetType.AGENT, agent_id, command)
    assert (await leases.try_lease(ports, ORG, queue_id, "w")) is not None
    idle = workers.RecordHeartbeat(
        worker_id="w", environment_name="e", status=WorkerStatus.IDLE, current_task_id=old_id if names_it else None
    )
    receipt = await workers.record_heartbeat(ports, ORG, idle)
    old = await queries.get_execution(ports, ORG, old_id)
    if names_it:
        assert (old.status, receipt.leases_extended) == (S.RUNNING, 2)
    else:
        assert (old.status, old.attempt, old.max_attempts, receipt.leases_extended) == (S.QUEUED, 1, 3, 1)
        assert (await _statuses(ports, old_id))[-1] == ("queued", 1, lease_ends.WENT_IDLE)
    assert (await queries.get_execution(ports, ORG, young.id)).status is S.RUNNING


async def test_without_a_bus_a_long_poll_waits_for_work_instead_of_answering_at_once() -> None:
    ports = memory_ports(SystemClock())  # no event bus, as an embedder's Ports may be
    queue_id, execution_id = await _queued(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w0") is not None  # the queue is empty again
    polling = asyncio.ensure_future(leases.lease(ports, ORG, queue_id, "w", wait_seconds=30))
    for _ in range(50):  # turns of the loop: the memory store's lease takes a few, then the poll waits
        await asyncio.sleep(0)
    assert not polling.done(), "the long poll answered at once"
    agent_id = (await queries.get_execution(ports, ORG, execution_id)).agent_id
    assert agent_id is not None
    command = execute.ExecuteCommand(prompt="more", worker_queue_id=queue_id)
    queued = await execute.execute(ports, ORG, TargetType.AGENT, agent_id, command)
    leased = await polling
    assert leased is not None
    assert leased.execution.id == queued.id


async def test_without_a_bus_a_stream_waits_between_keepalives_and_sees_new_events() -> None:
    """Nothing wakes a stream without a bus: it looks again every little while, letting the rest of the program
    run (it spun, yielding keep-alives without ever waiting, and starved the event loop)."""
    ports = memory_ports(SystemClock())
    queue_id, execution_id = await _queued(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w") is not None
    first_keepalive = asyncio.Event()

    async def append_after_the_first_keepalive() -> None:
        await first_keepalive.wait()
        chunk = [NewEvent(type=EventType.MESSAGE_CHUNK, data={"text": "hi"})]
        await completion.append_events(ports, ORG, execution_id, "w", 1, chunk)

    appending = asyncio.ensure_future(append_after_the_first_keepalive())
    keepalives = 0
    async for item in queries.follow(ports, ORG, execution_id, 2, keepalive_seconds=0.2):
        if item is None:
            keepalives += 1
            first_keepalive.set()
            assert keepalives < 50, "the stream yields keep-alives without waiting"
            continue
        assert item.type is EventType.MESSAGE_CHUNK
        break
    await appending
