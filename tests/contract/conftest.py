"""The same repository contract on every adapter: memory, SQLite and Postgres."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import asyncpg
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.memory.store import MemoryStore
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.notify import asyncpg_dsn
from controlplane_adapters.sql.pools import close_idle_connections
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.ports import UnitOfWork
from tests.databases import sqlite_database, truncate

UowFactory = Callable[[], UnitOfWork]
T = TypeVar("T")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def uow(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[UowFactory]:
    if request.param == "memory":
        yield MemoryStore().unit_of_work
        return
    if request.param == "sqlite":
        url = sqlite_database(tmp_path / "contract.db")
        engine: sa.Engine | AsyncEngine = create_sqlite_engine(url)  # what the server runs on
    else:
        url = request.getfixturevalue("postgres_url")
        await truncate(url)
        engine = create_engine(url)
    try:
        yield lambda: SqlUnitOfWork(engine)
    finally:
        if isinstance(engine, sa.Engine):
            close_idle_connections(engine)
            engine.dispose()
        else:
            await engine.dispose()


@pytest.fixture
async def postgres_engine(postgres_url: str) -> AsyncIterator[AsyncEngine]:
    """The service's engine on an empty Postgres database."""
    await truncate(postgres_url)
    engine = create_engine(postgres_url)
    try:
        yield engine
    finally:
        await engine.dispose()


async def behind(postgres_url: str, held: Sequence[str], change: Awaitable[T]) -> T:
    """Run `change` while another transaction holds what `held`'s statements lock; commit that transaction once
    `change` waits for a lock (polled from `pg_stat_activity`: it is the server's state); `change`'s result."""
    holder = await asyncpg.connect(asyncpg_dsn(postgres_url))
    observer = await asyncpg.connect(asyncpg_dsn(postgres_url))
    try:
        transaction = holder.transaction()
        await transaction.start()
        for statement in held:
            await holder.execute(statement)
        task = asyncio.ensure_future(change)  # its snapshot is taken before the holder commits
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        deadline = time.monotonic() + 10
        while not await observer.fetchval(query):
            assert time.monotonic() < deadline, "the change never waited for a lock held by the concurrent one"
            await asyncio.sleep(0.01)
        await transaction.commit()
        return await task
    finally:
        await holder.close()
        await observer.close()
