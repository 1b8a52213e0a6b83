"""A statement that runs past the statement timeout is stopped on both stores, and leaves its unit of work as
StatementTimeout (503 STATEMENT_TIMEOUT over HTTP), never as a driver error; the connection serves the next
unit of work as before."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.sql import engine as engine_module
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.pools import close_idle_connections
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.errors import StatementTimeout
from controlplane_http.errors import domain_error
from tests.databases import sqlite_database, truncate

LIMIT_MS = 200
# a walk without end: SQLite and Postgres count rows of a recursive CTE that never stops
ENDLESS = sa.text("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")


@pytest.fixture(params=["sqlite", "postgres"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[sa.Engine | AsyncEngine]:
    if request.param == "sqlite":
        sqlite = create_sqlite_engine(sqlite_database(tmp_path / "timeout.db"), statement_timeout_ms=LIMIT_MS)
        yield sqlite
        close_idle_connections(sqlite)
        sqlite.dispose()
        return
    url = request.getfixturevalue("postgres_url")
    await truncate(url)
    postgres = create_engine(url, statement_timeout_ms=LIMIT_MS)
    yield postgres
    await postgres.dispose()


async def scalar(engine: sa.Engine | AsyncEngine, statement: sa.TextClause, *, read_only: bool) -> object:
    async with SqlUnitOfWork(engine, read_only=read_only) as uow:
        return (await uow._open().execute(statement)).scalar()


@pytest.mark.parametrize("read_only", [True, False])
async def test_an_endless_statement_is_stopped_at_its_limit(engine: sa.Engine | AsyncEngine, read_only: bool) -> None:
    started = time.monotonic()
    with pytest.raises(StatementTimeout) as raised:
        await scalar(engine, ENDLESS, read_only=read_only)
    assert time.monotonic() - started < 30  # stopped (generous: a busy machine), not run to its (absent) end
    status, body, _ = domain_error(raised.value)
    assert (status, body["error"]["code"]) == (503, "STATEMENT_TIMEOUT")
    # the connection goes on serving: the next statements run, each with a limit of its own
    for _ in range(3):
        assert await scalar(engine, sa.text("SELECT 1"), read_only=read_only) == 1


async def test_statements_under_the_limit_run_whatever_the_unit_of_work_lasts(
    engine: sa.Engine | AsyncEngine,
) -> None:
    """The limit is a statement's: a unit of work of many short statements outlasting it runs to its end."""
    short = sa.text(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) SELECT count(*) FROM c"
    )
    async with SqlUnitOfWork(engine) as uow:
        started = time.monotonic()
        count = 0
        while time.monotonic() - started < 2 * LIMIT_MS / 1000:
            assert (await uow._open().execute(short)).scalar() == 2000
            count += 1
    assert count > 1


async def test_on_sqlite_a_short_statement_reads_no_clock_and_a_long_one_is_still_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A statement costs SQLite's units of work one attribute store (DeadlineConnection): its deadline is set by
    the progress handler's first call, which a short statement never reaches; a long one is stopped as before."""
    reads: list[float] = []

    class Clock:  # engine.py's `time`, counting its reads
        @staticmethod
        def monotonic() -> float:
            reads.append(0.0)
            return time.monotonic()

    sqlite = create_sqlite_engine(sqlite_database(tmp_path / "clock.db"), statement_timeout_ms=LIMIT_MS)
    try:
        await scalar(sqlite, sa.text("SELECT 1"), read_only=True)  # (the pool's connection opened)
        monkeypatch.setattr(engine_module, "time", Clock)
        for _ in range(50):
            assert await scalar(sqlite, sa.text("SELECT 1"), read_only=True) == 1
            assert isinstance(await scalar(sqlite, sa.text("SELECT count(*) FROM sqlite_master"), read_only=False), int)
        assert reads == []
        started = time.perf_counter()
        with pytest.raises(StatementTimeout):
            await scalar(sqlite, ENDLESS, read_only=True)
        assert time.perf_counter() - started < 30
        assert len(reads) >= 2  # its deadline set, then found past
    finally:
        close_idle_connections(sqlite)
        sqlite.dispose()
