"""Connections kept between units of work: SQLite's idle connections, Postgres's (`keep_idle`), and the
coalescers of reads (coalesced.py) per engine."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from controlplane_adapters.sql.coalesced import Coalescer, KeysRead
from controlplane_adapters.sql.engine import READ_ONLY
from controlplane_domain.errors import Unavailable

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


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


unavailable_without_connection = _UnavailableWithoutConnection()

# Idle SQLite connections, per engine and mode: a unit of work takes one and gives it back (a list pop and
# append, where the engine's pool costs tens of microseconds of checkout, reset and events).
_IDLE: weakref.WeakKeyDictionary[sa.Engine, dict[bool, list[sa.Connection]]] = weakref.WeakKeyDictionary()
MAX_IDLE = 8


def acquire(engine: sa.Engine, read_only: bool) -> sa.Connection:
    idle = _IDLE.setdefault(engine, {True: [], False: []})[read_only]
    if idle:
        return idle.pop()
    connection = engine.connect()
    return connection.execution_options(**{READ_ONLY: True}) if read_only else connection


def release(connection: sa.Connection, read_only: bool) -> None:
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
# cost more CPU than the point query in it.
@dataclass
class EngineState:
    """What the units of work keep per Postgres engine: idle connections (`keep_idle`; `most` 0: none) and the
    coalescers of point reads, by statement (coalesced.py). One lookup a unit of work finds both."""

    most: int = 0
    idle: list[AsyncConnection] = field(default_factory=list)
    coalescers: dict[int, Coalescer] = field(default_factory=dict)


_ENGINES: weakref.WeakKeyDictionary[AsyncEngine, EngineState] = weakref.WeakKeyDictionary()


def engine_state(engine: AsyncEngine) -> EngineState:
    state = _ENGINES.get(engine)
    if state is None:
        state = _ENGINES[engine] = EngineState()
    return state


def keep_idle(engine: AsyncEngine, most: int) -> None:
    """Let units of work on `engine` keep up to `most` idle connections out of its pool (the server does; close
    them with `close_idle_async_connections` before disposing of the engine). Readers and writers share them:
    Postgres readers differ only in how `AsyncEngineConnection` runs their statements. (Kept apart, the readers'
    idle connections could not serve writers, and creates were slower: docs/benchmarks.md.)"""
    engine_state(engine).most = most


async def acquire_async(engine: AsyncEngine, state: EngineState) -> AsyncConnection:
    if state.idle:
        return state.idle.pop()
    return await engine.connect()


async def release_async(engine: AsyncEngine, state: EngineState, connection: AsyncConnection, clean: bool) -> None:
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
LOOP_COALESCERS: weakref.WeakKeyDictionary[sa.Engine, dict[int, Coalescer]] = weakref.WeakKeyDictionary()


def coalescer_for(coalescers: dict[int, Coalescer], kind: Any, key_of: Callable[[Any], Hashable]) -> Coalescer:
    coalescer = coalescers.get(id(kind))
    if coalescer is None:
        coalescer = coalescers[id(kind)] = Coalescer(key_of)
    return coalescer


class CoalescedReads:
    """`coalesced_read` of a unit of work's connection (connection.py, loop_connection.py), by the coalescers of its
    engine that `coalescers` gives."""

    __slots__ = ()

    def coalescers(self) -> dict[int, Coalescer]:
        raise NotImplementedError

    async def coalesced_read(
        self, kind: Any, key: Hashable, key_of: Callable[[Any], Hashable], read: KeysRead
    ) -> list[Any]:
        """The rows of `key`, shared with the other readers of this engine that ask for rows of the same `kind`
        in this turn of the loop; the first of them runs `read` (on its own connection) for all their keys."""
        return await coalescer_for(self.coalescers(), kind, key_of).read(key, read)


def coalescer_of(engine: AsyncEngine | sa.Engine, kind: Any) -> Coalescer | None:
    """The coalescer of reads of `kind` (their statement) on `engine`, once one ran (for tests and benchmarks)."""
    if isinstance(engine, sa.Engine):
        return LOOP_COALESCERS.get(engine, {}).get(id(kind))
    state = _ENGINES.get(engine)
    return None if state is None else state.coalescers.get(id(kind))
