"""Hot statements run on the driver itself; they must read and write exactly what SQLAlchemy would."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.agents.sql import agent_to_row, agents
from controlplane_adapters.executions.lease_extras import lease_extras_statement
from controlplane_adapters.executions.mapping import event_to_row
from controlplane_adapters.executions.statements import events_after_seq
from controlplane_adapters.executions.table import execution_events, executions
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.hot import _HOT, HotResult, hot, plan_for
from controlplane_adapters.sql.pools import close_idle_connections
from controlplane_adapters.sql.statements import by_id, insert_row, page_of
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_adapters.workers.sql import held_by_worker, worker_by_id
from controlplane_domain.config import ExecutionEnvironment
from controlplane_domain.contexts.entity import Context, OwnerType, ResolvedContext, Source
from controlplane_domain.errors import Conflict
from controlplane_domain.executions.entity import EventType, Execution, ExecutionEvent, ExecutionStatus, TargetType
from controlplane_domain.paging import PageRequest
from tests.contract.test_repositories import T0, agent, worker
from tests.databases import truncate

Engine = sa.Engine | AsyncEngine


@pytest.fixture(params=["sqlite", "postgres"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'hot.db'}"
        migrator = create_engine(url)
        await migrate.upgrade(migrator)
        await migrator.dispose()
        sync = create_sqlite_engine(url)
        yield sync
        close_idle_connections(sync)
        sync.dispose()
        return
    url = request.getfixturevalue("postgres_url")
    await truncate(url)
    engine = create_engine(url)
    yield engine
    await engine.dispose()


async def through_sqlalchemy(engine: Engine, statement: Any, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The same statement executed the ordinary way, on a connection of its own."""
    if isinstance(engine, sa.Engine):
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(statement, parameters)]
    async with engine.connect() as connection:
        return [tuple(row) for row in await connection.execute(statement, parameters)]


def execution(execution_id: str, worker_id: str | None, status: ExecutionStatus) -> Execution:
    return Execution(
        id=execution_id,
        organization_id="org-a",
        target_type=TargetType.AGENT,
        agent_id="org-a-a",
        team_id=None,
        worker_queue_id="q",
        prompt="p",
        status=status,
        usage={"tokens": 3},
        worker_id=worker_id,
        lease_expires_at=T0 if worker_id else None,
        created_at=T0,
        updated_at=T0,
        queued_at=T0,
    )


async def seed(engine: Engine) -> None:
    rich = agent(
        "a",
        description=None,
        capabilities=["x", "y"],
        configuration={"nested": {"list": [1, 2.5, None, True]}, "text": "é"},
        execution_environment=ExecutionEnvironment(env_vars={"K": "V"}),
    )
    async with SqlUnitOfWork(engine) as work:
        await work.agents.add(rich)
        await work.agents.add(agent("b", at=1, description="second"))
        await work.workers.save(worker("w1", at=1, seen=2))
        await work.executions.add(execution("e1", "w1", ExecutionStatus.RUNNING))
        await work.executions.add(execution("e2", "w1", ExecutionStatus.COMPLETED))
        await work.executions.add(execution("e3", None, ExecutionStatus.QUEUED))
        context = ResolvedContext(
            context=Context(instructions="Be brief."), sources=(Source(OwnerType.AGENT, "org-a-a"),)
        )
        await work.executions.record(None, execution("e4", None, ExecutionStatus.QUEUED), [], context=context)
        await work.commit()


async def test_hot_reads_return_what_sqlalchemy_returns(engine: Engine) -> None:
    await seed(engine)
    cases: list[tuple[Any, dict[str, Any]]] = [
        (by_id(agents), {"organization_id": "org-a", "id": "org-a-a"}),
        (by_id(agents), {"organization_id": "org-b", "id": "org-a-a"}),
        (page_of(agents, ("created_at", "id"))[0], {"organization_id": "org-a", "counted": 10_000}),
        (page_of(agents, ("created_at", "id"))[1], {"organization_id": "org-a", "limit": 5, "offset": 0}),
        (page_of(agents, ("created_at", "id"))[1], {"organization_id": "org-a", "limit": 1, "offset": 1}),
        (worker_by_id(), {"organization_id": "org-a", "worker_id": "w1"}),
        (held_by_worker(), {"organization_id": "org-a", "worker_id": "w1"}),
        (by_id(executions), {"organization_id": "org-a", "id": "e1"}),
        (events_after_seq(), {"organization_id": "org-a", "execution_id": "e1", "after": 1, "limit": 2}),
        (lease_extras_statement(), {"organization_id": "org-a", "execution_id": "e4", "environment_id": "env"}),
        (lease_extras_statement(), {"organization_id": "org-a", "execution_id": "e1", "environment_id": "env"}),
    ]
    for statement, parameters in cases:
        expected = await through_sqlalchemy(engine, statement, parameters)
        async with SqlUnitOfWork(engine, read_only=True) as work:
            connection: Any = work._connection
            assert plan_for(statement, connection.dialect, parameters) is not None
            result = await connection.execute(statement, parameters)
            assert isinstance(result, HotResult)
            assert [tuple(row) for row in result] == expected
    held = await through_sqlalchemy(engine, held_by_worker(), {"organization_id": "org-a", "worker_id": "w1"})
    assert [row[0] for row in held] == ["e1"]  # the statuses the statement carries are bound, not lost


async def test_domain_objects_survive_hot_writes_and_reads(engine: Engine) -> None:
    await seed(engine)
    async with SqlUnitOfWork(engine, read_only=True) as work:
        found = await work.agents.get("org-a", "org-a-a")
        page, total = await work.agents.list_page("org-a", PageRequest(limit=10, offset=0))
    assert found is not None
    assert found.configuration == {"nested": {"list": [1, 2.5, None, True]}, "text": "é"}
    assert found.created_at == T0
    assert found.created_at.tzinfo is not None
    assert found.execution_environment == ExecutionEnvironment(env_vars={"K": "V"})
    assert (total, [a.name for a in page]) == (2, ["a", "b"])
    async with SqlUnitOfWork(engine) as work:
        assert await work.agents.get("org-a", "org-a-b") is not None  # a writer's second statement runs hot
        await work.agents.update(replace(found, name="renamed", updated_at=T0 + timedelta(seconds=5)))
        await work.workers.save(replace(worker("w1", at=1, seen=7), registered_at=T0 + timedelta(days=1)))
        renewed = await work.executions.extend_leases("org-a", "w1", T0 + timedelta(minutes=1))
        await work.commit()
    assert renewed == 1
    async with SqlUnitOfWork(engine, read_only=True) as work:
        renamed = await work.agents.get("org-a", "org-a-a")
        saved = await work.workers.get("org-a", "w1")
        leased = await work.executions.get("org-a", "e1")
    assert renamed == replace(found, name="renamed", updated_at=T0 + timedelta(seconds=5))
    assert saved is not None
    assert (saved.tasks_processed, saved.registered_at) == (7, T0 + timedelta(seconds=1))
    assert leased is not None
    assert leased.lease_expires_at == T0 + timedelta(minutes=1)


async def test_driver_errors_become_the_errors_sqlalchemy_raises(engine: Engine) -> None:
    await seed(engine)
    with pytest.raises(Conflict):
        async with SqlUnitOfWork(engine) as work:
            await work.agents.add(replace(agent("a"), id="another-id"))  # a first write (it begins): refused
    with pytest.raises(Conflict):
        async with SqlUnitOfWork(engine) as work:
            await work.agents.add(agent("first", at=3))  # the first write begins the transaction
            await work.agents.add(replace(agent("a"), id="another-id"))  # in that transaction: refused
    async with SqlUnitOfWork(engine, read_only=True) as work:
        assert (await work.agents.list_page("org-a", PageRequest()))[1] == 2  # nothing half-written


async def test_a_writer_rolls_back_hot_writes(engine: Engine) -> None:
    await seed(engine)
    async with SqlUnitOfWork(engine) as work:
        await work.agents.get("org-a", "org-a-a")
        await work.agents.add(agent("uncommitted", at=3))
        await work.agents.add(agent("uncommitted-too", at=4))  # (in the transaction the first write began)
    async with SqlUnitOfWork(engine, read_only=True) as work:
        assert await work.agents.get("org-a", "org-a-uncommitted") is None
        assert await work.agents.get("org-a", "org-a-uncommitted-too") is None


def test_compiling_a_hot_write_leaves_the_statements_made_from_it_whole() -> None:
    """A hot UPDATE is also the base of statements built later (`.returning(...)` as a CTE, as
    `executions/statements.py` does): compiling its plan must not change what they return."""
    statement = hot(sa.update(agents).values(name=sa.bindparam("new_name")))
    try:
        assert plan_for(statement, sa.create_engine("sqlite://").dialect, {"new_name": "x"}) is not None
        assert list(statement.returning(agents.c.id, agents.c.name).cte("changed").c.keys()) == ["id", "name"]
    finally:
        _HOT.pop(id(statement))


def test_statements_that_cannot_run_hot_are_refused_when_first_compiled() -> None:
    t = executions
    statement = hot(sa.select(t).where(t.c.status.in_(["queued", "running"])))
    try:
        with pytest.raises(ValueError, match="expanding"):
            plan_for(statement, sa.create_engine("sqlite://").dialect, {})
    finally:
        _HOT.pop(id(statement))


async def test_a_writers_hot_statements_commit_with_its_transaction(engine: Engine) -> None:
    first, then = agent_to_row(agent("first-write")), agent_to_row(agent("then-hot", at=1))
    async with SqlUnitOfWork(engine) as work:
        connection: Any = work._connection
        assert isinstance(await connection.execute(insert_row(agents), first), HotResult)  # (it begins)
        assert isinstance(await connection.execute(insert_row(agents), then), HotResult)
        await work.commit()
    for row in (first, then):
        found = await through_sqlalchemy(engine, by_id(agents), {"organization_id": "org-a", "id": row["id"]})
        assert [r[2] for r in found] == [row["name"]]


async def test_several_rows_insert_hot_in_one_statement_and_read_back_in_order(engine: Engine) -> None:
    await seed(engine)
    events = [
        ExecutionEvent(execution_id="e1", organization_id="org-a", seq=seq, type=EventType.LOG,
                       data={"n": seq, "text": "é"}, attempt=1, created_at=T0 + timedelta(seconds=seq))
        for seq in (1, 2, 3)
    ]  # fmt: skip
    async with SqlUnitOfWork(engine) as work:
        connection: Any = work._connection
        rows = [event_to_row(e) for e in events]
        assert plan_for(insert_row(execution_events), connection.dialect, rows) is not None
        await work.executions.add_events(events)
        await work.commit()
    async with SqlUnitOfWork(engine, read_only=True) as work:
        assert await work.executions.events_after("org-a", "e1", 1, 10) == events[1:]
        assert await work.executions.events_after("org-b", "e1", 0, 10) == []
    with pytest.raises(Conflict):  # the same sequence numbers again: the unique key holds
        async with SqlUnitOfWork(engine) as work:
            await work.executions.add_events(events[:1])
            await work.commit()


async def test_an_execution_update_writes_what_changed_and_reads_back_whole(engine: Engine) -> None:
    """Held rows are updated column by column; a row not held is updated whole: both read back the same."""
    await seed(engine)
    executed: list[str] = []
    async with SqlUnitOfWork(engine) as work:
        held = await work.executions.get("org-a", "e1", for_update=True)
        assert held is not None
        changed = replace(held, status=ExecutionStatus.COMPLETED, response="done", usage={"tokens": 9}, last_seq=4)
        if isinstance(engine, sa.Engine):
            work._connection._driver.set_trace_callback(executed.append)  # type: ignore[union-attr]
        await work.executions.update(changed)
        await work.executions.update(changed)  # nothing changed since: nothing to write
        if isinstance(engine, sa.Engine):
            work._connection._driver.set_trace_callback(None)  # type: ignore[union-attr]
        await work.commit()
    async with SqlUnitOfWork(engine) as work:
        assert await work.executions.get("org-a", "e1") == changed
        unheld = replace(changed, response="again", updated_at=T0 + timedelta(seconds=5))
        await work.executions.update(unheld)
        await work.commit()
    async with SqlUnitOfWork(engine, read_only=True) as work:
        assert await work.executions.get("org-a", "e1") == unheld
    if isinstance(engine, sa.Engine):
        updates = [sql for sql in executed if sql.startswith("UPDATE")]
        assert len(updates) == 1
        assigned = updates[0].split(" WHERE ")[0]
        assert "status=" in assigned
        assert "last_seq=" in assigned
        assert "created_at=" not in assigned, assigned
        assert "agent_id=" not in assigned, assigned
