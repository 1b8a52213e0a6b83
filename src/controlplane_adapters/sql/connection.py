"""The connection of a unit of work taken from an async engine (`AsyncEngineConnection`: Postgres, where hot
statements run on asyncpg itself); SQLite's, in the event loop's thread, is loop_connection.py's."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from controlplane_adapters.sql.coalesced import Coalescer
from controlplane_adapters.sql.errors import OverBudget, canceled
from controlplane_adapters.sql.hot import ATOMIC, READ, HotResult, Plan, plan_for
from controlplane_adapters.sql.pools import (
    CoalescedReads,
    acquire_async,
    engine_state,
    release_async,
    unavailable_without_connection,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


class AsyncEngineConnection(CoalescedReads):
    """A Postgres unit of work's connection, taken when its first statement runs; its hot statements run on
    the asyncpg connection itself.

    Plain reads run outside any transaction until the unit of work first writes (each statement its own
    snapshot, as under READ COMMITTED inside one, without the BEGIN and ROLLBACK round trips). The first write
    begins the transaction as SQLAlchemy would: its Connection's transaction first, then the statement on the
    DBAPI connection SQLAlchemy holds, whose driver adapter sends BEGIN with it; the statements after it run hot
    inside that transaction, which SQLAlchemy commits or rolls back. A locking read counts as a write.

    The unit of work's `commit_with` sets `committing` while its last write runs: an atomic statement (see `hot`: a
    repository's last statement of a write) that then finds no transaction open is sent as a transaction of its
    own, with no BEGIN and COMMIT; the commit that follows has nothing left to do. Anything the unit of work
    writes after it begins a new transaction.

    A reader's point reads may share one statement with other requests' (`coalesced_read`): a reader whose reads
    all joined another's statement never takes a connection at all."""

    def __init__(self, engine: AsyncEngine, read_only: bool) -> None:
        self._engine = engine
        self._state = engine_state(engine)
        self.dialect = engine.dialect
        self._read_only = read_only
        self._connection: AsyncConnection | None = None
        self._driver: Any = None
        self._hot = engine.dialect.driver == "asyncpg"
        self.committing = False  # `commit_with`'s write is running: an atomic first write may be sent alone
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
            with unavailable_without_connection:
                connection = self._connection = await acquire_async(self._engine, self._state)
        return connection

    def coalescers(self) -> dict[int, Coalescer]:
        return self._state.coalescers

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        connection = self._connection or await self._open()
        plan = plan_for(statement, self.dialect, parameters) if self._hot else None
        if plan is None:
            return await connection.execute(statement, parameters)
        if self._driver is None:
            sync = connection.sync_connection  # its pooled connection, without a trip through a greenlet
            live = sync is not None and not sync.invalidated and not sync.closed
            raw = sync.connection if live and sync else await connection.get_raw_connection()
            self._driver = raw.driver_connection
        if not self._read_only and plan.kind != READ and not self._driver.is_in_transaction():
            if plan.kind == ATOMIC and self.committing:
                self.committing = False  # sent alone: its own transaction, committed once it has run
            else:
                return await self._first_write(connection, plan, parameters)
        if isinstance(parameters, list):  # executemany (rows are not returned)
            return await self._run_many(plan, [plan.values(each) for each in parameters])
        return await self._run(plan, plan.values(parameters or {}))

    async def execute_within(
        self, statement: Any, milliseconds: int | None, parameters: Any = None, *, organization_id: str
    ) -> list[Any]:
        """The statement's rows, read within `milliseconds` (OverBudget past them): the transaction's
        `statement_timeout` for this statement only (SET LOCAL, then back to the connection's own). Three round
        trips rather than one: only for the statements of a tenant's bounded walk, never a hot route's. None: a
        plain read (Postgres runs it off the loop, within the statement timeout)."""
        if milliseconds is None:
            return list(await self.execute(statement, parameters))
        connection = self._connection or await self._open()
        await connection.execute(sa.text(f"SET LOCAL statement_timeout = {int(milliseconds)}"))
        try:
            rows = list(await connection.execute(statement, parameters))
        except sa.exc.DBAPIError as exc:
            if canceled(exc):
                raise OverBudget(f"stopped past its budget of {milliseconds} ms") from exc
            raise
        await connection.execute(sa.text("SET LOCAL statement_timeout = DEFAULT"))
        return rows

    async def _first_write(self, connection: AsyncConnection, plan: Plan, parameters: Any) -> HotResult:
        """The unit of work's first write, on the DBAPI connection SQLAlchemy holds (PEP 249): its driver adapter
        begins the transaction with it, and SQLAlchemy, whose transaction is begun first, commits or rolls it back.
        The statements after it run hot inside that transaction."""
        many = isinstance(parameters, list)
        values: Any = [plan.values(each) for each in parameters] if many else plan.values(parameters or {})

        def run(sync: sa.Connection) -> HotResult:
            cursor = sync.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                if many:
                    cursor.executemany(plan.sql, values)
                    return HotResult([], len(values))
                cursor.execute(plan.sql, values)
                return HotResult([], cursor.rowcount) if plan.row is None else HotResult(plan.rows(cursor.fetchall()))
            finally:
                cursor.close()

        if not connection.in_transaction():
            await connection.begin()
        try:
            return await connection.run_sync(run)
        except Exception as exc:
            raise await self._translate(plan.sql, values, exc) from exc

    async def _run_many(self, plan: Plan, values: list[list[Any]]) -> HotResult:
        try:
            await self._driver.executemany(plan.sql, values)
        except Exception as exc:
            raise await self._translate(plan.sql, values, exc) from exc
        return HotResult([], len(values))

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
            category = _asyncpg_errors().get(kind)
            if category is not None:
                translated = getattr(dbapi, category)(error.args[0] if error.args else str(error), error)
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
        connection = self._connection  # else nothing to commit (reads, a write sent alone): no greenlet trip
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
            await release_async(self._engine, self._state, connection, clean)


@functools.cache
def _asyncpg_errors() -> dict[type[BaseException], str]:
    """asyncpg's errors -> the PEP 249 error of SQLAlchemy's asyncpg adapter that its cursor raises for them (the
    adapter's own table, by category: `DBAPIError.instance` picks SQLAlchemy's exception by that category)."""
    from asyncpg import exceptions

    return {
        exceptions.IntegrityConstraintViolationError: "IntegrityError",
        exceptions.SyntaxOrAccessError: "ProgrammingError",
        exceptions.InterfaceError: "InterfaceError",
        exceptions.InvalidCachedStatementError: "NotSupportedError",
        exceptions.InternalServerError: "InternalError",
        exceptions.InternalClientError: "InternalError",
        exceptions.PostgresError: "Error",
    }
