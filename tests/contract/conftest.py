"""The same repository contract on every adapter: memory, SQLite and Postgres."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.memory import MemoryStore
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.database import (
    SqlUnitOfWork,
    close_idle_connections,
    create_engine,
    create_sqlite_engine,
)
from controlplane_domain.ports import UnitOfWork
from tests.databases import truncate

UowFactory = Callable[[], UnitOfWork]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def uow(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[UowFactory]:
    if request.param == "memory":
        yield MemoryStore().unit_of_work
        return
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'contract.db'}"
        migrator = create_engine(url)
        await migrate.upgrade(migrator)
        await migrator.dispose()
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
