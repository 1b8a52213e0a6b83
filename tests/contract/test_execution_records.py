"""`ExecutionRepository.record`: a change of an execution and its events, written atomically, with a
compare-and-set on `last_seq`, on every store."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents.entity import Agent
from controlplane_domain.environments.entity import Environment, EnvironmentStatus, QueueStatus, WorkerQueue
from controlplane_domain.errors import Conflict
from controlplane_domain.executions.entity import (
    EventType,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    LeaseTerms,
    leased,
)
from controlplane_domain.executions.ports import Leased
from tests.contract.conftest import UowFactory
from tests.contract.test_hot_statements import execution
from tests.contract.test_repositories import T0, agent, worker
from tests.databases import truncate


def events(of: Execution, *seqs: int, text: str = "x") -> list[ExecutionEvent]:
    return [
        ExecutionEvent(execution_id=of.id, organization_id=of.organization_id, seq=seq, type=EventType.LOG,
                       data={"text": text, "n": [seq, 1.5, None, True], "é": "ü"}, attempt=of.attempt,
                       created_at=T0 + timedelta(seconds=seq))
        for seq in seqs
    ]  # fmt: skip


async def stored(uow: UowFactory, execution_id: str) -> tuple[Execution | None, list[ExecutionEvent]]:
    async with uow() as work:
        return await work.executions.get("org-a", execution_id), await work.executions.events_after(
            "org-a", execution_id, 0, 100
        )


async def test_a_new_execution_is_recorded_with_its_first_events(uow: UowFactory) -> None:
    new = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=2)
    first = events(new, 1, 2)
    async with uow() as work:
        assert await work.executions.record(None, new, first)
        await work.commit()
    assert await stored(uow, "e1") == (new, first)
    with pytest.raises(Conflict):  # the same id again
        async with uow() as work:
            await work.executions.record(None, new, [])
            await work.commit()
    assert await stored(uow, "e1") == (new, first)


async def test_events_keep_their_data_and_instants_exactly(uow: UowFactory) -> None:
    """Event data of every JSON kind, and timestamps with and without microseconds or another offset, read back
    as recorded (Postgres receives a change's events as one JSON document)."""
    new = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=4)
    data: list[dict[str, Any]] = [
        {"big": 2**63 - 1, "small": -(2**63), "float": 0.1, "tiny": 5e-324, "zero": 0.0, "neg": -2.5},
        {"text": 'quote " backslash \\ line\nsep \u2028 emoji \U0001f600 \u00e9', "": "empty key"},
        {"nested": {"list": [[], {}, [1, [2, [3]]]], "null": None, "yes": True, "no": False}},
        {},
    ]
    stamps = [T0, T0.replace(microsecond=1), T0.replace(microsecond=999_999),
              T0.astimezone(timezone(timedelta(hours=-5, minutes=-30))) + timedelta(seconds=1)]  # fmt: skip
    first = [
        ExecutionEvent(execution_id="e1", organization_id="org-a", seq=seq, type=EventType.MESSAGE_CHUNK,
                       data=item, attempt=new.attempt, created_at=stamp)
        for seq, (item, stamp) in enumerate(zip(data, stamps, strict=True), start=1)
    ]  # fmt: skip
    async with uow() as work:
        assert await work.executions.record(None, new, first)
        await work.commit()
    _, logged = await stored(uow, "e1")
    assert logged == first  # aware timestamps compare as instants


async def test_a_change_is_recorded_only_over_the_execution_it_was_made_from(uow: UowFactory) -> None:
    queued = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=1)
    async with uow() as work:
        await work.executions.record(None, queued, events(queued, 1))
        await work.commit()
    running = replace(queued, status=ExecutionStatus.RUNNING, attempt=1, worker_id="w1", last_seq=3, usage={"t": 1})
    async with uow() as work:
        read = await work.executions.get("org-a", "e1")
        assert read == queued
        assert await work.executions.record(read, running, events(running, 2, 3))
        await work.commit()
    assert await stored(uow, "e1") == (running, events(queued, 1) + events(running, 2, 3))

    # A writer that read the queued execution lost the race: nothing of its change is written.
    late = replace(queued, status=ExecutionStatus.CANCELLED, last_seq=2)
    async with uow() as work:
        assert not await work.executions.record(queued, late, events(late, 2, text="late"))
        await work.commit()
    assert await stored(uow, "e1") == (running, events(queued, 1) + events(running, 2, 3))


async def test_a_change_writes_only_what_it_changed(uow: UowFactory) -> None:
    """A lease extension (no event) that lands between a read and the record of an append is kept."""
    running = replace(execution("e1", "w1", ExecutionStatus.RUNNING), attempt=1, last_seq=1)
    async with uow() as work:
        await work.executions.record(None, running, events(running, 1))
        await work.commit()
    async with uow() as work:
        read = await work.executions.get("org-a", "e1")
    assert read is not None
    later = T0 + timedelta(minutes=5)
    async with uow() as work:
        assert await work.executions.extend_leases("org-a", "w1", later) == 1
        await work.commit()
    appended = replace(read, last_seq=2)
    async with uow() as work:
        assert await work.executions.record(read, appended, events(appended, 2))
        await work.commit()
    after, logged = await stored(uow, "e1")
    assert after == replace(appended, lease_expires_at=later)
    assert [event.seq for event in logged] == [1, 2]


async def test_a_change_of_another_organizations_execution_is_refused(uow: UowFactory) -> None:
    mine = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=1)
    async with uow() as work:
        await work.executions.record(None, mine, events(mine, 1))
        await work.commit()
    theirs = replace(mine, organization_id="org-b")
    changed = replace(theirs, status=ExecutionStatus.CANCELLED, last_seq=2)
    async with uow() as work:
        assert not await work.executions.record(theirs, changed, events(changed, 2))
        await work.commit()
    assert await stored(uow, "e1") == (mine, events(mine, 1))


async def test_on_postgres_a_record_committed_with_nothing_before_is_its_own_transaction(postgres_url: str) -> None:
    """`commit_with` a record, after reads only: no BEGIN or COMMIT is sent, the record's one statement is its own
    transaction; a write after it is a new transaction (rolled back when left without commit). A record that is
    not the last write joins the unit of work's transaction (and rolls back with it)."""
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    sent: list[str] = []
    try:
        async with SqlUnitOfWork(engine) as work:
            connection: Any = work._connection
            new = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=1)
            assert await work.executions.get("org-a", "e1") is None
            driver = connection._driver
            driver.add_query_logger(lambda record: sent.append(record.query.split()[0].upper()))
            assert await work.commit_with(lambda: work.executions.record(None, new, events(new, 1)))
            await asyncio.sleep(0)  # asyncpg calls its query loggers with call_soon: one turn of the loop runs them
            assert sent == ["WITH"]
            assert await work.executions.record(None, replace(new, id="e2"), [])  # a new transaction, not committed
        async with SqlUnitOfWork(engine) as work:  # written by the record alone
            assert await work.executions.get("org-a", "e1") == new
            assert await work.executions.get("org-a", "e2") is None
        async with SqlUnitOfWork(engine) as work:
            changed = replace(new, status=ExecutionStatus.CANCELLED, last_seq=2)
            assert await work.executions.record(new, changed, events(changed, 2))
            # left without commit: rolled back
        async with SqlUnitOfWork(engine) as work:
            assert await work.executions.get("org-a", "e1") == new
        async with engine.connect() as plain:
            count = (await plain.execute(sa.text("SELECT count(*) FROM execution_events"))).scalar_one()
        assert count == 1
    finally:
        await engine.dispose()


def queue(queue_id: str = "q", org: str = "org-a") -> WorkerQueue:
    return WorkerQueue(id=queue_id, organization_id=org, environment_id="env", name=f"queue-{queue_id}",
                       description=None, status=QueueStatus.ACTIVE, max_workers=None, heartbeat_interval_seconds=30,
                       created_at=T0, updated_at=T0)  # fmt: skip


ENVIRONMENT = Environment(id="env", organization_id="org-a", name="prod", description=None,
                          status=EnvironmentStatus.ACTIVE, variables={}, metadata={}, created_at=T0,
                          updated_at=T0)  # fmt: skip


async def test_an_execution_is_added_only_where_its_queue_and_agent_are(uow: UowFactory) -> None:
    """An execute's reads and its write together: nothing is written unless both are found in the
    execution's organization."""
    await seed_queue(uow)
    async with uow() as work:
        await work.agents.add(agent("b", org="org-b"))
        await work.commit()
    new = replace(execution("e1", None, ExecutionStatus.QUEUED), agent_id="org-a-a", last_seq=1)
    refused = [
        replace(new, agent_id="org-b-b"),  # another organization's agent
        replace(new, worker_queue_id="nope"),
        replace(new, agent_id="nope", worker_queue_id="nope"),
        replace(new, organization_id="org-b", agent_id="org-b-b"),  # org-b has no such queue
    ]
    answers = []
    for each in [*refused, new]:
        async with uow() as work:
            queue_found, agent_found, added = await work.executions.add_if_found(each, events(each, 1))
            answers.append((queue_found, agent_found))
            await work.commit()
    assert answers == [(True, False), (False, True), (False, False), (False, True), (True, True)]
    assert added == replace(new, target_name="a")  # what its agent runs with (no model: tests of RunWith)
    assert await stored(uow, "e1") == (added, events(new, 1))
    async with uow() as work:
        assert await work.executions.get("org-b", "e1") is None
    with pytest.raises(Conflict):  # the same id again
        async with uow() as work:
            await work.executions.add_if_found(new, [])
            await work.commit()


def terms(worker_id: str, seconds: int = 10) -> LeaseTerms:
    now = T0 + timedelta(seconds=seconds, microseconds=7)
    return LeaseTerms(worker_id, now, now + timedelta(minutes=5))


async def seed_queue(uow: UowFactory, status: QueueStatus = QueueStatus.ACTIVE) -> Agent:
    mine = agent("a")
    async with uow() as work:
        await work.environments.add(ENVIRONMENT)
        await work.agents.add(mine)
        await work.queues.add(replace(queue(), status=status))
        await work.workers.save(worker("w1"))
        await work.commit()
    return mine


async def add_queued(uow: UowFactory, *executions: Execution) -> None:
    for each in executions:
        async with uow() as work:
            assert await work.executions.record(None, each, events(each, *range(1, each.last_seq + 1)))
            await work.commit()


async def test_a_lease_is_what_the_domain_decides_and_takes_the_oldest_queued(uow: UowFactory) -> None:
    """Every store leases as `executions.leased` decides (Postgres writes it in SQL): the execution, its status
    event, and what is read with it."""
    mine = await seed_queue(uow)
    async with uow() as work:
        assert await work.executions.lease_next("org-a", "q", terms("w1")) == Leased(queue(), worker("w1"), None, None)
    # the first was leased before and re-queued (attempt 1, three events, started once): the lease counts on
    first = replace(execution("e1", None, ExecutionStatus.QUEUED), attempt=1, last_seq=3, queued_at=T0,
                    started_at=T0 - timedelta(minutes=1))  # fmt: skip
    second = replace(execution("e2", None, ExecutionStatus.QUEUED), last_seq=1, queued_at=T0 + timedelta(seconds=1))
    await add_queued(uow, second, first)
    async with uow() as work:
        outcome = await work.executions.lease_next("org-a", "q", terms("w-unknown"))
        await work.commit()
    running, told = leased(first, terms("w-unknown"))
    assert (running.attempt, running.last_seq, [e.seq for e in told]) == (2, 4, [4])
    assert outcome == Leased(queue(), None, running, mine)
    assert await stored(uow, "e1") == (running, events(first, 1, 2, 3) + told)
    assert await stored(uow, "e2") == (second, events(second, 1))
    async with uow() as work:
        again = await work.executions.lease_next("org-a", "q", terms("w1", seconds=20))
        await work.commit()
    assert again.execution == leased(second, terms("w1", seconds=20))[0]
    async with uow() as work:
        assert await work.executions.lease_next("org-a", "q", terms("w1")) == Leased(queue(), worker("w1"), None, None)


async def test_a_lease_sees_only_an_active_queue_of_its_organization(uow: UowFactory) -> None:
    await seed_queue(uow, QueueStatus.PAUSED)
    first = replace(execution("e1", None, ExecutionStatus.QUEUED), last_seq=1, queued_at=T0)
    await add_queued(uow, first)
    outcomes = []
    for organization_id, queue_id in (("org-a", "q"), ("org-b", "q"), ("org-a", "other")):
        async with uow() as work:  # a lease committed with the unit of work (on Postgres: sent alone)
            lease = work.executions.lease_next
            outcomes.append(await work.commit_with(lambda: lease(organization_id, queue_id, terms("w1"))))  # noqa: B023
    paused = Leased(replace(queue(), status=QueueStatus.PAUSED), worker("w1"), None, None)
    assert outcomes == [paused, Leased(None, None, None, None), Leased(None, None, None, None)]
    assert await stored(uow, "e1") == (first, events(first, 1))


async def test_on_postgres_a_lease_is_one_statement_and_skips_what_another_holds(postgres_url: str) -> None:
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    sent: list[str] = []
    try:
        factory: UowFactory = lambda: SqlUnitOfWork(engine)  # noqa: E731
        await seed_queue(factory)
        await add_queued(
            factory,
            *(replace(execution(f"e{n}", None, ExecutionStatus.QUEUED), last_seq=1, queued_at=T0 + timedelta(seconds=n))
              for n in (1, 2)),
        )  # fmt: skip
        async with SqlUnitOfWork(engine) as holding:
            assert await holding.executions.get("org-a", "e1", for_update=True) is not None  # held until the end
            async with SqlUnitOfWork(engine) as work:
                connection: Any = work._connection
                await work.agents.get("org-a", "warm-up")  # takes the connection's driver
                connection._driver.add_query_logger(lambda record: sent.append(record.query.split()[0].upper()))
                outcome = await work.commit_with(lambda: work.executions.lease_next("org-a", "q", terms("w2")))
        assert outcome.execution is not None
        assert outcome.execution.id == "e2"
        assert sent == ["WITH"]  # no BEGIN, no COMMIT: a transaction of its own
        async with SqlUnitOfWork(engine) as work:
            assert await work.executions.get("org-a", "e2") == outcome.execution
            later = await work.executions.lease_next("org-a", "q", terms("w3"))
        assert later.execution is not None
        assert later.execution.id == "e1"
    finally:
        await engine.dispose()
