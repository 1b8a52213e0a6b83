"""Concurrent point reads answer what reads one at a time would, on every store; on Postgres, readers of one
turn of the loop share one statement (controlplane_adapters/sql/coalesced.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.sql import migrate, rendered_reads
from controlplane_adapters.sql.coalesced import by_ids
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.pages import IN_LOOP_OFFSET
from controlplane_adapters.sql.pools import close_idle_connections, coalescer_of
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_adapters.workers import sql as sql_workers
from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.paging import PageRequest
from tests.contract.conftest import UowFactory
from tests.contract.test_execution_records import ENVIRONMENT, queue
from tests.contract.test_hot_statements import execution
from tests.contract.test_repositories import agent, worker
from tests.databases import truncate


async def seed(uow: UowFactory) -> None:
    async with uow() as work:
        await work.agents.add(agent("a"))
        await work.agents.add(agent("b"))
        await work.agents.add(agent("a", org="org-b"))
        await work.environments.add(ENVIRONMENT)
        await work.queues.add(queue())
        held = replace(execution("e1", "w1", ExecutionStatus.RUNNING), last_seq=1)
        await work.executions.record(None, held, [])
        await work.executions.record(None, replace(execution("e2", "w1", ExecutionStatus.COMPLETED), last_seq=1), [])
        await work.commit()


async def rendered_page(engine: AsyncEngine | sa.Engine, org: str, limit: int, offset: int) -> tuple[list[str], int]:
    """A reader's rendered page of agents: their names and the total."""
    async with SqlUnitOfWork(engine, read_only=True) as work:
        found = await work.agents.rendered_page(org, PageRequest(limit=limit, offset=offset))
    assert found is not None
    items, total = found
    return [item["name"] for item in json.loads(items)], total


@asynccontextmanager
async def seeded_sqlite(tmp_path: Path) -> AsyncIterator[sa.Engine]:
    """The loop's SQLite engine on a migrated file, seeded (`seed`)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'pages.db'}"
    migrator = create_engine(url)
    await migrate.upgrade(migrator)
    await migrator.dispose()
    engine = create_sqlite_engine(url)
    try:
        await seed(lambda: SqlUnitOfWork(engine))
        yield engine
    finally:
        close_idle_connections(engine)
        engine.dispose()


@asynccontextmanager
async def fresh_postgres(postgres_url: str, **options: Any) -> AsyncIterator[AsyncEngine]:
    """An engine (`create_engine`'s `options`) on the test's Postgres database, emptied first; disposed after."""
    await truncate(postgres_url)
    engine = create_engine(postgres_url, **options)
    try:
        yield engine
    finally:
        await engine.dispose()


async def test_concurrent_gets_each_answer_their_own_organizations_row(uow: UowFactory) -> None:
    await seed(uow)

    async def get(org: str, agent_id: str) -> str | None:
        async with uow() as work:  # a reader of its own, as every request has
            found = await work.agents.get(org, agent_id)
        return None if found is None else f"{found.organization_id}/{found.name}"

    asks = [("org-a", "org-a-a"), ("org-a", "org-a-b"), ("org-b", "org-b-a"), ("org-b", "org-a-a"),
            ("org-a", "nobody"), ("org-a", "org-a-a")]  # fmt: skip
    answers = await asyncio.gather(*(get(org, agent_id) for org, agent_id in asks))
    assert answers == ["org-a/a", "org-a/b", "org-b/a", None, None, "org-a/a"]


async def test_concurrent_gets_of_executions_each_answer_their_own_organizations_row(uow: UowFactory) -> None:
    await seed(uow)

    async def get(org: str, execution_id: str) -> str | None:
        async with uow() as work:
            found = await work.executions.get(org, execution_id)
        return None if found is None else f"{found.organization_id}/{found.id}/{found.status.value}"

    asks = [("org-a", "e1"), ("org-a", "e2"), ("org-b", "e1"), ("org-a", "e3")]
    answers = await asyncio.gather(*(get(org, execution_id) for org, execution_id in asks))
    assert answers == ["org-a/e1/running", "org-a/e2/completed", None, None]


async def test_concurrent_reads_of_held_executions_keep_to_their_organization_and_worker(uow: UowFactory) -> None:
    await seed(uow)

    async def held(org: str, worker_id: str) -> list[str]:
        async with uow() as work:
            return [each.id for each in await work.executions.running_for_worker(org, worker_id)]

    asks = [("org-a", "w1"), ("org-b", "w1"), ("org-a", "w2"), ("org-a", "w1")]
    assert await asyncio.gather(*(held(org, worker_id) for org, worker_id in asks)) == [["e1"], [], [], ["e1"]]


async def test_concurrent_gets_of_workers_each_answer_their_own_organizations_worker(uow: UowFactory) -> None:
    async with uow() as work:
        await work.workers.register(worker("w1"))
        await work.workers.register(worker("w1", org="org-b", seen=5))
        await work.workers.register(worker("w2"))
        await work.commit()

    async def get(org: str, worker_id: str) -> str | None:
        async with uow() as work:
            found = await work.workers.get(org, worker_id)
        return None if found is None else f"{found.organization_id}/{found.worker_id}/{found.tasks_processed}"

    asks = [("org-a", "w1"), ("org-b", "w1"), ("org-a", "w2"), ("org-b", "w2"), ("org-a", "w1"), ("org-c", "w1")]
    answers = await asyncio.gather(*(get(org, worker_id) for org, worker_id in asks))
    assert answers == ["org-a/w1/0", "org-b/w1/5", "org-a/w2/0", None, "org-a/w1/0", None]


async def test_on_postgres_a_turns_worker_gets_share_one_statement(postgres_url: str) -> None:
    """A heartbeat's read of its worker (a Postgres reader) joins the turn's others: one statement, no connection
    of its own but the leader's."""
    async with fresh_postgres(postgres_url) as engine:
        async with SqlUnitOfWork(engine) as work:
            await work.workers.register(worker("w1"))
            await work.workers.register(worker("w1", org="org-b", seen=5))
            await work.commit()

        async def get(org: str, worker_id: str) -> int | None:
            async with SqlUnitOfWork(engine, read_only=True) as work:
                found = await work.workers.get(org, worker_id)
            return None if found is None else found.tasks_processed

        asks = [("org-a", "w1"), ("org-b", "w1"), ("org-a", "nobody"), ("org-a", "w1")]
        assert await asyncio.gather(*(get(*ask) for ask in asks)) == [0, 5, None, 0]
        reads = coalescer_of(engine, sql_workers._workers_by_keys())
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 3)
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def hold_two(uow: UowFactory) -> None:
    """Besides `seed` (whose e1 is held by org-a's w1, which never registered): org-b's w1, and org-a's w2 holding
    e3 and e4."""
    async with uow() as work:
        await work.workers.register(worker("w1", org="org-b", seen=5))
        await work.workers.register(worker("w2"))
        for held in ("e3", "e4"):
            await work.executions.record(None, replace(execution(held, "w2", ExecutionStatus.RUNNING), last_seq=1), [])
        await work.commit()


async def worker_and_held(uow: UowFactory, org: str, worker_id: str) -> tuple[str | None, list[str]]:
    async with uow() as work:  # a reader of its own, as every heartbeat has
        found, held = await work.workers.worker_and_held(org, worker_id)
    return None if found is None else f"{found.organization_id}/{found.worker_id}", sorted(e.id for e in held)


WORKERS_AND_HELD = [
    (("org-a", "w1"), (None, ["e1"])),
    (("org-b", "w1"), ("org-b/w1", [])),
    (("org-a", "w2"), ("org-a/w2", ["e3", "e4"])),
    (("org-b", "w2"), (None, [])),
    (("org-a", "w2"), ("org-a/w2", ["e3", "e4"])),
]


async def test_concurrent_reads_of_a_worker_and_what_it_holds_keep_to_their_own(uow: UowFactory) -> None:
    await seed(uow)
    await hold_two(uow)
    asks = [ask for ask, _ in WORKERS_AND_HELD]
    assert await asyncio.gather(*(worker_and_held(uow, *ask) for ask in asks)) == [want for _, want in WORKERS_AND_HELD]


async def test_on_postgres_a_turns_heartbeat_reads_share_one_statement(postgres_url: str) -> None:
    """A heartbeat's read of its worker and what it holds (a Postgres reader) joins the turn's others."""
    async with fresh_postgres(postgres_url) as engine:
        await seed(lambda: SqlUnitOfWork(engine))
        await hold_two(lambda: SqlUnitOfWork(engine))
        reader = lambda: SqlUnitOfWork(engine, read_only=True)  # noqa: E731
        asks = [ask for ask, _ in WORKERS_AND_HELD]
        answers = await asyncio.gather(*(worker_and_held(reader, *ask) for ask in asks))
        assert answers == [want for _, want in WORKERS_AND_HELD]
        reads = coalescer_of(engine, sql_workers._workers_and_held())
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 4)
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_on_postgres_readers_of_one_turn_share_one_statement_and_writers_do_not(postgres_url: str) -> None:
    async with fresh_postgres(postgres_url) as engine:
        await seed(lambda: SqlUnitOfWork(engine))

        async def get(agent_id: str, read_only: bool = True) -> str | None:
            async with SqlUnitOfWork(engine, read_only=read_only) as work:
                found = await work.agents.get("org-a", agent_id)
            return None if found is None else found.name

        assert await asyncio.gather(get("org-a-a"), get("org-a-b"), get("nobody"), get("org-a-a")) == [
            "a", "b", None, "a"
        ]  # fmt: skip
        reads = coalescer_of(engine, by_ids(agents))
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 3)
        assert await asyncio.gather(get("org-a-a", read_only=False), get("org-a-b", read_only=False)) == ["a", "b"]
        assert (reads.batches, reads.keys) == (1, 3)  # a writer reads inside its own unit of work
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_on_postgres_concurrent_pages_each_answer_their_own_page_in_one_statement(postgres_url: str) -> None:
    async with fresh_postgres(postgres_url) as engine:
        await seed(lambda: SqlUnitOfWork(engine))

        asks = [("org-a", 1, 0), ("org-a", 1, 1), ("org-b", 1, 0), ("org-a", 1, 0), ("org-a", 5, 0), ("org-c", 1, 0),
                ("org-a", 1, 7)]  # fmt: skip
        assert await asyncio.gather(*(rendered_page(engine, *ask) for ask in asks)) == [
            (["a"], 2), (["b"], 2), (["a"], 1), (["a"], 2), (["a", "b"], 2), ([], 0), ([], 2)
        ]  # fmt: skip
        reads = coalescer_of(engine, rendered_reads._postgres_rendered_pages_of(agents))
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 6)


async def test_on_sqlite_more_concurrent_pages_than_pooled_connections_share_their_renderings(tmp_path: Path) -> None:
    """A coalesced read waits a turn of the loop; it holds no SQLite connection meanwhile (a unit of work that
    finds the fixed pool of 8 empty would wait for one in the loop's own thread, for ever)."""
    async with seeded_sqlite(tmp_path) as engine:
        pages = (rendered_page(engine, "org-a", 1, n % 3) for n in range(30))
        answers = await asyncio.wait_for(asyncio.gather(*pages), 10)
        assert answers == [(["a"], 2), (["b"], 2), ([], 2)] * 10
        reads = coalescer_of(engine, rendered_reads._rendered_page_of(agents))
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 3)


async def test_on_sqlite_a_turns_pages_of_several_organizations_each_answer_their_own_page(tmp_path: Path) -> None:
    """The shallow pages of one organization in a turn share one count (`RenderedReads._sqlite_turn`); each still
    answers its own page and its own organization's total, and a deep page (read off the loop) its own."""
    async with seeded_sqlite(tmp_path) as engine:
        asks = [("org-a", 1, 0), ("org-a", 1, 1), ("org-b", 1, 0), ("org-a", 1, 0), ("org-a", 5, 0), ("org-c", 1, 0),
                ("org-a", 1, 7), ("org-b", 1, IN_LOOP_OFFSET + 1), ("org-a", 2, 1)]  # fmt: skip
        assert await asyncio.gather(*(rendered_page(engine, *ask) for ask in asks)) == [
            (["a"], 2), (["b"], 2), (["a"], 1), (["a"], 2), (["a", "b"], 2), ([], 0), ([], 2), ([], 1), (["b"], 2)
        ]  # fmt: skip
        reads = coalescer_of(engine, rendered_reads._rendered_page_of(agents))
        assert reads is not None
        assert (reads.batches, reads.keys) == (1, 8)


async def test_on_postgres_a_reader_that_holds_a_connection_reads_alone(postgres_url: str) -> None:
    """Joining another reader's coalesced read, it would keep its connection idle while the leader waits for one:
    with a pool of one, the leader would time out."""
    async with fresh_postgres(postgres_url, pool_size=1, pool_timeout=5) as engine:
        await seed(lambda: SqlUnitOfWork(engine))

        async def held() -> list[str]:
            async with SqlUnitOfWork(engine, read_only=True) as work:
                return [each.id for each in await work.executions.running_for_worker("org-a", "w1")]

        async with SqlUnitOfWork(engine, read_only=True) as holding:
            assert await holding.workers.get("org-a", "w1") is None  # takes the pool's one connection
            leader = asyncio.create_task(held())
            await asyncio.sleep(0)  # one turn: the other reader leads a coalesced read and waits for a connection
            mine = [each.id for each in await holding.executions.running_for_worker("org-a", "w1")]
        assert mine == ["e1"]
        assert await asyncio.wait_for(leader, 10) == ["e1"]
