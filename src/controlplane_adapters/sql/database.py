"""Engine creation, the SQL unit of work, and the database health probe."""

from __future__ import annotations

import functools
import logging
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import msgspec
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from controlplane_adapters.sql.coalesced import Coalescer, KeysRead
from controlplane_adapters.sql.hot import ATOMIC, READ, HotResult, Plan, plan_for
from controlplane_adapters.sql.repositories import (
    SqlAgentRepository,
    SqlApiKeyRepository,
    SqlEnvironmentRepository,
    SqlExecutionRepository,
    SqlIdempotencyRepository,
    SqlModelRepository,
    SqlOrganizationRepository,
    SqlQueueRepository,
    SqlTeamRepository,
    SqlWorkerRepository,
)
from controlplane_domain.errors import Conflict, DomainError, TransientFailure, Unavailable, ValidationFailed

log = logging.getLogger(__name__)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./controlplane.db"
READ_ONLY = "controlplane_read_only"


def _json_decode(text: str | bytes) -> Any:
    """JSON columns are read with msgspec (several times faster than the standard library's decoder)."""
    return msgspec.json.decode(text)


def _json_encode(value: Any) -> str:
    """...and written with it (compact: no spaces after separators)."""
    return msgspec.json.encode(value).decode()


_JSON: dict[str, Any] = {"json_deserializer": _json_decode, "json_serializer": _json_encode}


def is_sqlite(url: str | sa.URL) -> bool:
    return sa.make_url(url).get_backend_name() == "sqlite"


DEFAULT_POOL_SIZE = 20
POOL_TIMEOUT_SECONDS = 30


def create_engine(
    url: str, *, echo: bool = False, pool_size: int = DEFAULT_POOL_SIZE, pool_timeout: float = POOL_TIMEOUT_SECONDS
) -> AsyncEngine:
    """An async engine; on SQLite: foreign keys on, WAL, a busy timeout and `BEGIN IMMEDIATE` transactions."""
    if is_sqlite(url):
        # A fixed pool: opening SQLite connections (and their PRAGMAs) per request would cost more than waiting.
        engine = create_async_engine(url, echo=echo, connect_args={"timeout": 30}, pool_size=8, max_overflow=0, **_JSON)
        _configure_sqlite(engine)
        return engine
    # No pre-ping: a connection the server dropped fails one request with 503 and is replaced (see operations.md).
    # Postgres: at most `pool_size` connections, opened on demand and kept; a unit of work that finds them all
    # busy waits for one (up to POOL_TIMEOUT_SECONDS, then 503). No overflow connections: under 32 concurrent
    # requests a pool of 20 with 10 overflow opened and closed a connection (asyncpg's connect, its TLS probe)
    # for nearly every request past the twentieth; get by id 2,591 -> 4,061 req/s, p99 85 -> 33 ms without.
    return create_async_engine(url, echo=echo, pool_size=pool_size, max_overflow=0, pool_timeout=pool_timeout, **_JSON)


def create_sqlite_engine(url: str, *, echo: bool = False, autocheckpoint: bool = True) -> sa.Engine:
    """The synchronous engine the SQLite units of work run on, in the event loop's own thread.

    SQLite answers a point query in microseconds; handing each statement to a driver thread (aiosqlite) costs
    far more than running it. A unit of work then never yields to the loop until it ends, so transactions in
    one process never interleave or wait on each other. Other processes on the same file wait in SQLite's
    busy handler (up to 30 s); several processes belong on Postgres.

    `autocheckpoint=False` leaves WAL checkpoints to a `WalCheckpointer` (checkpoint.py), which must then run."""
    sync_url = sa.make_url(url).set(drivername="sqlite")
    engine = sa.create_engine(sync_url, echo=echo, connect_args={"timeout": 30, "check_same_thread": False}, **_JSON)
    _configure_sqlite_events(engine, autocheckpoint=autocheckpoint)
    return engine


def _configure_sqlite(engine: AsyncEngine) -> None:
    _configure_sqlite_events(engine.sync_engine)


def _configure_sqlite_events(engine: sa.Engine, *, autocheckpoint: bool = True) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        if engine.url.database not in (None, "", ":memory:"):  # WAL: readers never wait for the writer
            try:
                cursor.execute("PRAGMA journal_mode=WAL")
            except Exception as exc:  # another connection is switching the new file to WAL (it persists)
                if "locked" not in str(exc):
                    raise
            cursor.execute("PRAGMA synchronous=NORMAL")
            if not autocheckpoint:
                cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Writers queue on the database lock at BEGIN instead of failing when they upgrade a read lock;
        # readers take no lock at all (WAL gives them a snapshot). A unit of work whose hot statements began
        # the transaction on the driver already (see _LoopConnection) needs no second BEGIN.
        writer = not connection.get_execution_options().get(READ_ONLY, False)
        if writer and not getattr(connection.connection.dbapi_connection, "in_transaction", False):  # aiosqlite: no
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        # readers run each statement in autocommit: WAL gives it a consistent snapshot, without a lock


class _UnavailableWithoutConnection:
    """`with` it: a unit of work that cannot get its connection is Unavailable (503). (A class: entered by every
    unit of work, where a generator-based context manager cost a generator and its frame each time.)"""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(exc, (OSError, DBAPIError)):
            raise Unavailable("the database is unavailable") from exc
        if isinstance(exc, sa.exc.TimeoutError):  # every pooled connection stayed busy for POOL_TIMEOUT_SECONDS
            raise Unavailable("the database is busy: no connection became free in time") from exc


_unavailable_without_connection = _UnavailableWithoutConnection()


class _LoopConnection:
    """A synchronous Connection with the awaitable surface the repositories use (SQLite in the loop thread).

    Hot statements (see `hot.py`) run on the DBAPI connection itself. A writer whose first statement is hot
    begins the transaction on the driver (BEGIN IMMEDIATE, without SQLAlchemy's transaction object and events);
    a later statement that is not hot joins it (SQLAlchemy's begin sees the driver's transaction and issues no
    second BEGIN), and commit or rollback ends both."""

    def __init__(self, engine: sa.Engine, read_only: bool) -> None:
        self._engine = engine
        self.dialect = engine.dialect
        self._read_only = read_only
        self._connection: sa.Connection | None = None  # taken with the first statement
        self._driver: Any = None
        self.coalesces = False  # point reads: SQLite answers one in less time than a coalesced one waits

    @property
    def coalesces_pages(self) -> bool:
        """A page is rendered once for the readers of one turn that ask for it, by a reader that holds no
        connection yet: a coalesced read waits a turn of the loop, and nothing may hold a SQLite connection
        across a wait (a unit of work that finds the fixed pool empty waits for one in the loop's own thread)."""
        return self._read_only and self._connection is None

    def _open(self) -> sa.Connection:
        connection = self._connection
        if connection is None:
            with _unavailable_without_connection:
                connection = self._connection = _acquire(self._engine, self._read_only)
            self._driver = connection.connection.dbapi_connection
        return connection

    async def coalesced_read(
        self,
        kind: Any,
        key: Hashable,
        key_of: Callable[[Any], Hashable],
        read: KeysRead,
    ) -> list[Any]:
        """As `_AsyncConnection.coalesced_read`, for this engine's readers in the loop's thread."""
        return await _coalescer(_LOOP_COALESCERS.setdefault(self._engine, {}), kind, key_of).read(key, read)

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        connection = self._connection or self._open()
        plan = plan_for(statement, self.dialect, parameters)
        if plan is None:
            return connection.execute(statement, parameters)
        error = self.dialect.loaded_dbapi.Error
        if not self._read_only and not self._driver.in_transaction:
            try:
                self._driver.execute("BEGIN IMMEDIATE")
            except error as exc:
                raise self._error("BEGIN IMMEDIATE", (), exc) from exc
        many = isinstance(parameters, list)  # executemany: rows are not returned
        values: Any = [plan.values(each) for each in parameters] if many else plan.values(parameters or {})
        try:
            if many:
                return HotResult([], self._driver.executemany(plan.sql, values).rowcount)
            cursor = self._driver.execute(plan.sql, values)
            return HotResult([], cursor.rowcount) if plan.row is None else HotResult(plan.rows(cursor.fetchall()))
        except error as exc:
            raise self._error(plan.sql, values, exc) from exc

    def _error(self, sql: str, values: Any, error: Exception) -> sa.exc.StatementError:
        """The DBAPIError SQLAlchemy would raise for an error of the sqlite3 connection."""
        return sa.exc.DBAPIError.instance(sql, values, error, self.dialect.loaded_dbapi.Error)

    async def commit(self) -> None:
        if self._connection is None:
            return
        if self._connection.in_transaction():
            self._connection.commit()  # commits the driver's transaction too (it is the same one)
        elif self._driver.in_transaction:
            try:
                self._driver.commit()
            except self.dialect.loaded_dbapi.Error as exc:
                raise self._error("COMMIT", (), exc) from exc

    async def rollback(self) -> None:
        if self._connection is None:
            return
        if self._connection.in_transaction():
            self._connection.rollback()
        elif self._driver.in_transaction:
            self._driver.rollback()

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            _release(connection, self._read_only)


# Idle SQLite connections, per engine and mode: a unit of work takes one and gives it back (a list pop and
# append, where the engine's pool costs tens of microseconds of checkout, reset and events).
_IDLE: weakref.WeakKeyDictionary[sa.Engine, dict[bool, list[sa.Connection]]] = weakref.WeakKeyDictionary()
MAX_IDLE = 8


def _acquire(engine: sa.Engine, read_only: bool) -> sa.Connection:
    idle = _IDLE.setdefault(engine, {True: [], False: []})[read_only]
    if idle:
        return idle.pop()
    connection = engine.connect()
    return connection.execution_options(**{READ_ONLY: True}) if read_only else connection


def _release(connection: sa.Connection, read_only: bool) -> None:
    idle = _IDLE.get(connection.engine)
    if connection.invalidated or connection.closed or idle is None or len(idle[read_only]) >= MAX_IDLE:
        connection.close()
        return
    idle[read_only].append(connection)


def close_idle_connections(engine: sa.Engine) -> None:
    """Close the idle connections kept for `engine` (at shutdown, before disposing of it)."""
    for idle in _IDLE.pop(engine, {}).values():
        for connection in idle:
            connection.close()


# Postgres units of work keep their connection checked out between uses, for engines that `keep_idle` names:
# entering and leaving a unit of work through the engine (AsyncConnection, greenlet, pool checkout and checkin)
# cost 53 us of CPU, more than the point query in it (44 us on the driver).
@dataclass
class _Engine:
    """What the units of work keep per Postgres engine: idle connections (`keep_idle`; `most` 0: none) and the
    coalescers of point reads, by statement (coalesced.py). One lookup a unit of work finds both."""

    most: int = 0
    idle: list[AsyncConnection] = field(default_factory=list)
    coalescers: dict[int, Coalescer] = field(default_factory=dict)


_ENGINES: weakref.WeakKeyDictionary[AsyncEngine, _Engine] = weakref.WeakKeyDictionary()


def _engine_state(engine: AsyncEngine) -> _Engine:
    state = _ENGINES.get(engine)
    if state is None:
        state = _ENGINES[engine] = _Engine()
    return state


def keep_idle(engine: AsyncEngine, most: int) -> None:
    """Let units of work on `engine` keep up to `most` idle connections out of its pool (the server does; close
    them with `close_idle_async_connections` before disposing of the engine). Readers and writers share them:
    Postgres readers differ only in how `_AsyncConnection` runs their statements. (Kept apart, the readers'
    idle connections could not serve writers: create agent measured 1,507 req/s, 2,102-2,338 with one list.)"""
    _engine_state(engine).most = most


async def _acquire_async(engine: AsyncEngine, state: _Engine) -> AsyncConnection:
    if state.idle:
        return state.idle.pop()
    return await engine.connect()


async def _release_async(engine: AsyncEngine, state: _Engine, connection: AsyncConnection, clean: bool) -> None:
    """Keep a clean connection for the next unit of work, unless the pool has none left to give: then whoever
    waits for one (a unit of work, the health probe) gets it back through the pool."""
    sync = connection.sync_connection
    pool: Any = engine.pool
    if (
        clean
        and sync is not None
        and not sync.invalidated
        and not sync.closed
        and not sync.in_transaction()
        and len(state.idle) < state.most
        and pool.checkedout() < pool.size()
    ):
        state.idle.append(connection)
        return
    await connection.close()


async def close_idle_async_connections(engine: AsyncEngine) -> None:
    """Give back the idle connections kept for `engine` (at shutdown, before disposing of it)."""
    state = _ENGINES.get(engine)
    if state is None:
        return
    idle, state.idle, state.most = state.idle, [], 0
    for connection in idle:
        await connection.close()


# SQLite readers' coalescers, per engine and kind of read (only pages: a SQLite point read costs less than the
# turn of the loop a coalesced one waits).
_LOOP_COALESCERS: weakref.WeakKeyDictionary[sa.Engine, dict[int, Coalescer]] = weakref.WeakKeyDictionary()


def _coalescer(coalescers: dict[int, Coalescer], kind: Any, key_of: Callable[[Any], Hashable]) -> Coalescer:
    coalescer = coalescers.get(id(kind))
    if coalescer is None:
        coalescer = coalescers[id(kind)] = Coalescer(key_of)
    return coalescer


def coalescer_of(engine: AsyncEngine | sa.Engine, kind: Any) -> Coalescer | None:
    """The coalescer of reads of `kind` (their statement) on `engine`, once one ran (for tests and benchmarks)."""
    if isinstance(engine, sa.Engine):
        return _LOOP_COALESCERS.get(engine, {}).get(id(kind))
    state = _ENGINES.get(engine)
    return None if state is None else state.coalescers.get(id(kind))


class _AsyncConnection:
    """A Postgres unit of work's connection, taken when its first statement runs; its hot statements run on
    the asyncpg connection itself.

    Plain reads run outside any transaction until the unit of work first writes (each statement its own
    snapshot, as under READ COMMITTED inside one, without the BEGIN and ROLLBACK round trips). The first write
    begins the transaction as SQLAlchemy would (its Connection's transaction, then the driver's BEGIN), so that
    SQLAlchemy commits or rolls back what ran hot; a locking read counts as a write. An atomic statement (see
    `hot`) that comes first runs as a transaction of its own; the unit of work then writes nothing more.

    A reader's point reads may share one statement with other requests' (`coalesced_read`): a reader whose reads
    all joined another's statement never takes a connection at all."""

    def __init__(self, engine: AsyncEngine, read_only: bool) -> None:
        self._engine = engine
        self._state = _engine_state(engine)
        self.dialect = engine.dialect
        self._read_only = read_only
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._hot = engine.dialect.driver == "asyncpg"
        self._done = False  # an atomic statement ran on its own: nothing may be written after it
        self._coalescing = self._hot and read_only

    @property
    def coalesces(self) -> bool:
        """Whether this unit of work's reads may be coalesced: a reader (it never writes; each of its statements
        runs outside a transaction, its own snapshot) that holds no connection yet. A reader that holds one
        reads alone: joining another's read, it would keep a pooled connection idle while its leader may be
        waiting for one."""
        return self._coalescing and self._connection is None

    coalesces_pages = coalesces

    async def _open(self) -> AsyncConnection:
        connection = self._connection
        if connection is None:
            with _unavailable_without_connection:
                connection = self._connection = await _acquire_async(self._engine, self._state)
        return connection

    async def coalesced_read(
        self,
        kind: Any,
        key: Hashable,
        key_of: Callable[[Any], Hashable],
        read: KeysRead,
    ) -> list[Any]:
        """The rows of `key`, shared with the other readers of this engine that ask for rows of the same `kind`
        in this turn of the loop; the first of them runs `read` (on its own connection) for all their keys."""
        return await _coalescer(self._state.coalescers, kind, key_of).read(key, read)

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        connection = self._connection or await self._open()
        plan = plan_for(statement, self.dialect, parameters) if self._hot else None
        if plan is None:
            if self._done and not isinstance(statement, sa.Select):
                raise RuntimeError("an atomic write ended this unit of work: it writes nothing after it")
            return await connection.execute(statement, parameters)
        if self._driver is None:
            sync = connection.sync_connection  # its pooled connection, without a trip through a greenlet
            live = sync is not None and not sync.invalidated and not sync.closed
            raw = sync.connection if live and sync else await connection.get_raw_connection()
            self._driver = raw.driver_connection
            self._adapter: Any = raw.dbapi_connection
        if not self._read_only and plan.kind != READ and not self._driver.is_in_transaction():
            if self._done:
                raise RuntimeError("an atomic write ended this unit of work: it writes nothing after it")
            if plan.kind == ATOMIC:
                self._done = True
            elif not await self._begin(connection):
                return await connection.execute(statement, parameters)
        if isinstance(parameters, list):  # executemany (rows are not returned)
            return await self._run_many(plan, [plan.values(each) for each in parameters])
        return await self._run(plan, plan.values(parameters or {}))

    async def _run_many(self, plan: Plan, values: list[list[Any]]) -> HotResult:
        try:
            await self._driver.executemany(plan.sql, values)
        except Exception as exc:
            raise await self._translate(plan.sql, values, exc) from exc
        return HotResult([], len(values))

    async def _begin(self, connection: AsyncConnection) -> bool:
        start = getattr(self._adapter, "_start_transaction", None)
        if start is None or getattr(self._adapter, "_transaction", None) is not None:
            return False  # not the adapter this was written against: let SQLAlchemy begin
        if not connection.in_transaction():
            await connection.begin()
        try:
            await start()
        except Exception as exc:
            raise await self._translate("BEGIN", [], exc) from exc
        return True

    async def _run(self, plan: Plan, values: list[Any]) -> HotResult:
        try:
            if plan.row is None:
                status = await self._driver.execute(plan.sql, *values)
                return HotResult([], int(status.rsplit(" ", 1)[-1]) if status[-1:].isdigit() else -1)
            return HotResult(plan.rows(await self._driver.fetch(plan.sql, *values)))
        except Exception as exc:
            raise await self._translate(plan.sql, values, exc) from exc

    async def _translate(self, sql: str, values: list[Any], error: Exception) -> BaseException:
        """The exception SQLAlchemy would raise; a lost connection is invalidated (the pool replaces it)."""
        dbapi: Any = self.dialect.loaded_dbapi
        translated: BaseException = error
        for kind in type(error).__mro__:
            if kind in dbapi._asyncpg_error_translate:
                translated = dbapi._asyncpg_error_translate[kind](error.args[0] if error.args else str(error), error)
                break
        lost = self._driver.is_closed() or isinstance(error, OSError | ConnectionError)
        if lost and self._connection is not None:
            await self._connection.invalidate()
        if isinstance(translated, dbapi.Error):
            wrapped: BaseException = sa.exc.DBAPIError.instance(
                sql, values, translated, dbapi.Error, connection_invalidated=lost
            )
            return wrapped
        return translated

    async def commit(self) -> None:
        connection = self._connection  # else nothing to commit (reads, an atomic write): no greenlet trip
        if connection is not None and connection.in_transaction():
            await connection.commit()

    async def rollback(self) -> None:
        connection = self._connection
        if connection is not None and connection.in_transaction():
            await connection.rollback()

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            clean = self._driver is None or not self._driver.is_in_transaction()
            await _release_async(self._engine, self._state, connection, clean)


class SqlUnitOfWork:
    """One connection, one transaction; driver errors leave as domain errors, chained to the cause."""

    def __init__(self, engine: AsyncEngine | sa.Engine, *, read_only: bool = False) -> None:
        self._engine = engine
        self._read_only = read_only
        self._connection: _AsyncConnection | _LoopConnection | None = None

    async def __aenter__(self) -> Self:
        # Readers take no write lock (SQLite: no BEGIN at all; Postgres: hot reads outside a transaction). Both
        # take their connection with their first statement (a failure to get one is Unavailable there).
        if isinstance(self._engine, sa.Engine):
            self._connection = _LoopConnection(self._engine, self._read_only)
        else:
            self._connection = _AsyncConnection(self._engine, self._read_only)
        return self

    # Repositories are made on first use (a request touches one or two of the ten); a unit of work is used once.
    @functools.cached_property
    def agents(self) -> SqlAgentRepository:
        return SqlAgentRepository(self._open())

    @functools.cached_property
    def teams(self) -> SqlTeamRepository:
        return SqlTeamRepository(self._open())

    @functools.cached_property
    def workers(self) -> SqlWorkerRepository:
        return SqlWorkerRepository(self._open())

    @functools.cached_property
    def models(self) -> SqlModelRepository:
        return SqlModelRepository(self._open())

    @functools.cached_property
    def api_keys(self) -> SqlApiKeyRepository:
        return SqlApiKeyRepository(self._open())

    @functools.cached_property
    def organizations(self) -> SqlOrganizationRepository:
        return SqlOrganizationRepository(self._open())

    @functools.cached_property
    def idempotency(self) -> SqlIdempotencyRepository:
        return SqlIdempotencyRepository(self._open())

    @functools.cached_property
    def environments(self) -> SqlEnvironmentRepository:
        return SqlEnvironmentRepository(self._open())

    @functools.cached_property
    def queues(self) -> SqlQueueRepository:
        return SqlQueueRepository(self._open())

    @functools.cached_property
    def executions(self) -> SqlExecutionRepository:
        return SqlExecutionRepository(self._open())

    def _open(self) -> _AsyncConnection | _LoopConnection:
        if self._connection is None:
            raise RuntimeError("repositories are used inside the unit of work's block")
        return self._connection

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                await connection.rollback()
                await connection.close()
            except (OSError, DBAPIError):
                log.warning("closing a database connection failed", exc_info=True)
        if exc is not None and not isinstance(exc, DomainError):
            translated = translate_driver_error(exc)
            if translated is not None:
                raise translated from exc

    async def commit(self) -> None:
        if self._connection is None:
            raise RuntimeError("commit outside the unit of work")
        await self._connection.commit()


TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})  # serialization failure, deadlock, lock not available


def _sqlstate(exc: DBAPIError) -> str | None:
    original = exc.orig
    code = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return code if isinstance(code, str) else None


def translate_driver_error(exc: BaseException) -> DomainError | None:
    """Map a driver error to the domain error a caller can act on, or None to let it through."""
    if isinstance(exc, DBAPIError) and (_sqlstate(exc) in TRANSIENT_SQLSTATES or "database is locked" in str(exc.orig)):
        return TransientFailure("a concurrent change got in the way; please retry")
    if isinstance(exc, IntegrityError):
        return Conflict("the change conflicts with existing data")
    original = exc.orig if isinstance(exc, sa.exc.StatementError) else exc
    if isinstance(exc, DataError) or isinstance(original, OverflowError):  # OverflowError: SQLite's 64-bit integers
        return ValidationFailed("", "a value cannot be stored by the database")
    if isinstance(exc, OperationalError | OSError | ConnectionError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    ):
        return Unavailable("the database is unavailable")
    return None


class SqlHealthProbe:
    """Answers whether the database executes a trivial query."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def database_ok(self) -> bool:
        try:
            async with self._engine.connect() as connection:
                # A reader: on SQLite a writer's BEGIN IMMEDIATE here would take the database lock from a driver
                # thread while the event loop's own writers wait for it without yielding (a stall of up to 30 s).
                await (await connection.execution_options(**{READ_ONLY: True})).execute(sa.text("SELECT 1"))
        except Exception:  # any failure means "not answering"; the reason is logged
            log.warning("database health check failed", exc_info=True)
            return False
        return True
