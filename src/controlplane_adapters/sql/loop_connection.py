"""SQLite's unit of work connection, in the event loop's thread (`LoopConnection`); its reads off the loop are
sql/off_loop.py's."""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.coalesced import Coalescer
from controlplane_adapters.sql.engine import DeadlineConnection
from controlplane_adapters.sql.hot import HotResult, plan_for
from controlplane_adapters.sql.off_loop import off_loop_turn, read_off_loop
from controlplane_adapters.sql.pools import (
    LOOP_COALESCERS,
    CoalescedReads,
    acquire,
    release,
    unavailable_without_connection,
)


class LoopConnection(CoalescedReads):
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
        self._limited = False  # its statements have a time limit (DeadlineConnection)
        self.coalesces = False  # point reads: SQLite answers one in less time than a coalesced one waits
        self.committing = False  # (as `AsyncEngineConnection.committing`; SQLite's writer always has a transaction)

    @property
    def coalesces_pages(self) -> bool:
        """A page is rendered once for the readers of one turn that ask for it, by a reader that holds no
        connection yet: a coalesced read waits a turn of the loop, and nothing may hold a SQLite connection
        across a wait (a unit of work that finds the fixed pool empty waits for one in the loop's own thread)."""
        return self._read_only and self._connection is None

    def _open(self) -> sa.Connection:
        connection = self._connection
        if connection is None:
            with unavailable_without_connection:
                connection = self._connection = acquire(self._engine, self._read_only)
            driver = self._driver = connection.connection.dbapi_connection
            seconds = driver.statement_seconds if isinstance(driver, DeadlineConnection) else None
            self._limited = seconds is not None
        return connection

    def coalescers(self) -> dict[int, Coalescer]:  # this engine's, for its readers in the loop's thread
        return LOOP_COALESCERS.setdefault(self._engine, {})

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        connection = self._connection or self._open()
        if self._limited:  # a new statement: its deadline starts with its first check (DeadlineConnection)
            self._driver.deadline = None
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

    async def execute_within(
        self, statement: Any, milliseconds: int | None, parameters: Any = None, *, organization_id: str
    ) -> list[Any]:
        """The statement's rows, read within `milliseconds` of CPU time (OverBudget past them:
        `DeadlineConnection.within`; None: the statement timeout alone), off the event loop: on a connection of
        its own in a worker thread (sqlite3 gives the interpreter lock back while SQLite steps), at most
        OFF_LOOP_READS of an engine at once and one of an organization (`off_loop_turn`), the others waiting
        their turn without a connection. A budget in the loop's thread would not bound the loop: several such
        statements ready in one turn of the loop run one after the other before any timer.

        A reader lets its own connection go first (its statements are each their own snapshot, as this one is),
        so that no SQLite connection is held across the wait. A writer, or a database in memory (one a
        connection), reads in the loop's thread, within the budget."""
        seconds = None if milliseconds is None else milliseconds / 1000
        if self._read_only and self._engine.url.database not in (None, "", ":memory:"):
            connection, self._connection = self._connection, None
            if connection is not None:
                release(connection, self._read_only)
            async with off_loop_turn(self._engine, organization_id):
                return await asyncio.to_thread(read_off_loop, self._engine, statement, parameters, seconds)
        connection = self._connection or self._open()
        driver = self._driver
        if not isinstance(driver, DeadlineConnection):  # (an engine not made by create_sqlite_engine: no budget)
            return list(connection.execute(statement, parameters))
        return driver.within(seconds, lambda: list(connection.execute(statement, parameters)))

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
            release(connection, self._read_only)
