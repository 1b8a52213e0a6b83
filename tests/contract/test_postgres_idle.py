"""Postgres units of work keep their connections between uses (`keep_idle`), without starving the pool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.health import SqlHealthProbe
from controlplane_adapters.sql.pools import close_idle_async_connections, keep_idle
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from tests.contract.test_repositories import agent
from tests.databases import truncate


@asynccontextmanager
async def keeping_idle(url: str, size: int, **options: Any) -> AsyncIterator[AsyncEngine]:
    """An engine whose units of work keep up to `size` idle connections (as the server's), closed after."""
    engine = create_engine(url, pool_size=size, **options)
    keep_idle(engine, size)
    try:
        yield engine
    finally:
        await close_idle_async_connections(engine)
        await engine.dispose()


def driver_of(work: SqlUnitOfWork) -> Any:
    connection: Any = work._connection
    return connection._connection.sync_connection.connection.driver_connection


async def test_the_next_unit_of_work_reuses_the_connection_clean(postgres_url: str) -> None:
    await truncate(postgres_url)
    async with keeping_idle(postgres_url, 4) as engine:
        async with SqlUnitOfWork(engine) as work:
            await work.agents.add(agent("left-uncommitted"))
            first = driver_of(work)
            assert first.is_in_transaction()
        async with SqlUnitOfWork(engine) as work:
            assert await work.agents.get("org-a", "org-a-left-uncommitted") is None
            assert driver_of(work) is first, "the same connection, taken from the idle list"
            assert not first.is_in_transaction(), "rolled back before it was kept"
        assert engine.pool.checkedout() == 1  # type: ignore[attr-defined]
        await close_idle_async_connections(engine)
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_unit_of_work_waiting_for_the_pool_gets_the_next_connection_given_back(postgres_url: str) -> None:
    """With every pooled connection taken, a finished unit of work returns its connection to the pool (where the
    waiter is) instead of keeping it idle; the health probe, which takes its connection from the pool, too."""
    await truncate(postgres_url)
    async with keeping_idle(postgres_url, 2, pool_timeout=10) as engine:
        first, second = SqlUnitOfWork(engine), SqlUnitOfWork(engine)
        for work in (first, second):  # a unit of work takes its connection with its first statement
            await work.__aenter__()
            await work.agents.get("org-a", "nobody")
        waiting = asyncio.create_task(SqlHealthProbe(engine).database_ok())

        async def read() -> None:
            async with SqlUnitOfWork(engine, read_only=True) as third:
                assert await third.agents.get("org-a", "nobody") is None

        queued = asyncio.create_task(read())
        await first.__aexit__(None, None, None)
        await second.__aexit__(None, None, None)
        assert await asyncio.wait_for(waiting, 5) is True
        await asyncio.wait_for(queued, 5)
        await close_idle_async_connections(engine)
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_unit_of_work_takes_a_connection_only_when_it_runs_a_statement(postgres_url: str) -> None:
    await truncate(postgres_url)
    async with keeping_idle(postgres_url, 2) as engine, SqlUnitOfWork(engine) as work:
        assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
        await work.agents.get("org-a", "nobody")
        assert engine.pool.checkedout() == 1  # type: ignore[attr-defined]
