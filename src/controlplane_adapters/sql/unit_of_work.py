"""The SQL unit of work: one connection, one transaction, and each area's repository on it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from controlplane_adapters.areas import Area, AreaRepositories
from controlplane_adapters.sql.connection import AsyncEngineConnection
from controlplane_adapters.sql.errors import translate_driver_error
from controlplane_adapters.sql.loop_connection import LoopConnection
from controlplane_domain.errors import DomainError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")


class SqlUnitOfWork(AreaRepositories):
    """One connection, one transaction; driver errors leave as domain errors, chained to the cause. Its repositories
    are the areas' (`areas.py`), made on its connection on first use."""

    def __init__(self, engine: AsyncEngine | sa.Engine, *, read_only: bool = False) -> None:
        self._engine = engine
        self._read_only = read_only
        self._connection: AsyncEngineConnection | LoopConnection | None = None

    async def __aenter__(self) -> Self:
        # Readers take no write lock (SQLite: no BEGIN at all; Postgres: hot reads outside a transaction). Both
        # take their connection with their first statement (a failure to get one is Unavailable there).
        if isinstance(self._engine, sa.Engine):
            self._connection = LoopConnection(self._engine, self._read_only)
        else:
            self._connection = AsyncEngineConnection(self._engine, self._read_only)
        return self

    def make(self, area: Area[R, Any]) -> R:
        """`area`'s repository on this unit of work's connection (`Area.__get__`)."""
        return area.sql(self._open())

    def _open(self) -> AsyncEngineConnection | LoopConnection:
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

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        """`write`, then the commit; its statement marked atomic (`hot`) that finds no transaction open is sent as a
        transaction of its own (the connection's `committing`), else it joins the transaction, which then commits."""
        connection = self._open()
        connection.committing = True
        try:
            answer = await write()
        finally:
            connection.committing = False
        await connection.commit()
        return answer
