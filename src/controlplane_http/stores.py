"""The store the app runs on, from the settings: SQL (migrated on start; SQLite's units of work in the loop's thread,
Postgres's on its async engine, with its LISTEN/NOTIFY bus) or memory, with what runs at its start and stop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import sqlalchemy as sa

from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_adapters.memory.store import MemoryHealthProbe, MemoryStore
from controlplane_adapters.settings.model import Settings
from controlplane_adapters.sql.checkpoint import WalCheckpointer
from controlplane_adapters.sql.engine import create_engine, create_sqlite_engine
from controlplane_adapters.sql.health import SqlHealthProbe
from controlplane_adapters.sql.pools import close_idle_async_connections, close_idle_connections, keep_idle
from controlplane_adapters.sql.schema import metadata
from controlplane_adapters.sql.statistics import INTERVAL_SECONDS as STATISTICS_SECONDS
from controlplane_adapters.sql.statistics import analyze_young_tables
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.ports import EventBus, HealthProbe, UnitOfWork
from controlplane_http.schema import prepare_schema
from controlplane_runtime.periodic import Periodic

Hook = Callable[[], Awaitable[None]]


@dataclass
class Store:
    """A unit-of-work factory, its health probe, its event bus, and what must run at start and stop."""

    uow: Callable[[], UnitOfWork]
    probe: HealthProbe
    backend: str
    bus: EventBus
    startup: list[Hook] = field(default_factory=list)
    shutdown: list[Hook] = field(default_factory=list)
    reader: Callable[[], UnitOfWork] | None = None


def memory_store() -> Store:
    store = MemoryStore()
    return Store(store.unit_of_work, MemoryHealthProbe(), "memory", LocalEventBus(), reader=store.read_unit_of_work)


def sql_store(settings: Settings) -> Store:
    limit = settings.database_statement_timeout_ms
    url = settings.database_url
    backend = sa.make_url(url).get_backend_name()
    if backend != "sqlite":
        return _postgres_store(settings)
    # SQLite: synchronous engines only (SQLAlchemy's asyncio extension is never loaded): the units of work's, in the
    # event loop's thread, and another for the migrations and the health probe, in a thread of their own (engine.run_on)
    engine = create_sqlite_engine(url)
    path = engine.url.database
    checkpointer = WalCheckpointer(path) if path and path != ":memory:" else None
    work_engine = create_sqlite_engine(url, autocheckpoint=checkpointer is None, statement_timeout_ms=limit)

    async def prepare_database() -> None:
        await prepare_schema(engine, auto_migrate=settings.auto_migrate)

    async def close_database() -> None:
        engine.dispose()
        close_idle_connections(work_engine)
        work_engine.dispose()

    def writer() -> UnitOfWork:
        return SqlUnitOfWork(work_engine)

    def reader() -> UnitOfWork:
        return SqlUnitOfWork(work_engine, read_only=True)

    startup: list[Hook] = [prepare_database]
    shutdown: list[Hook] = [close_database]
    if checkpointer is not None:  # checkpoints off the event loop (see checkpoint.py); the last one at stop
        startup.append(run_async(checkpointer.start))
        shutdown.insert(0, run_async(checkpointer.stop))
    return Store(writer, SqlHealthProbe(engine), backend, LocalEventBus(), startup, shutdown, reader)


def _postgres_store(settings: Settings) -> Store:
    engine = create_engine(
        settings.database_url,
        pool_size=settings.database_pool_size,
        statement_timeout_ms=settings.database_statement_timeout_ms,
        generic_plans=settings.database_generic_plans,
    )

    async def prepare_database() -> None:
        await prepare_schema(engine, auto_migrate=settings.auto_migrate)

    async def close_database() -> None:
        await close_idle_async_connections(engine)
        await engine.dispose()

    def writer() -> UnitOfWork:
        return SqlUnitOfWork(engine)

    def reader() -> UnitOfWork:
        return SqlUnitOfWork(engine, read_only=True)

    keep_idle(engine, settings.database_pool_size)
    from controlplane_adapters.sql.notify import PostgresEventBus  # (asyncpg: loaded for Postgres only)

    bus = PostgresEventBus(settings.database_url)
    names = [table.name for table in metadata.sorted_tables]
    statistics = Periodic("table statistics", STATISTICS_SECONDS, lambda: analyze_young_tables(engine, names))
    startup: list[Hook] = [prepare_database, bus.start, statistics.start]
    shutdown: list[Hook] = [statistics.stop, bus.stop, close_database]
    return Store(writer, SqlHealthProbe(engine), engine.url.get_backend_name(), bus, startup, shutdown, reader)


def run_async(function: Callable[[], None]) -> Hook:
    async def hook() -> None:
        function()

    return hook
