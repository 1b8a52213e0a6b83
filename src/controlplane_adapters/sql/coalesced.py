"""Reads of concurrent requests, coalesced into one statement (Postgres readers; SQLite readers' pages).

Under load, several requests for the same kind of read (an agent or an execution by id, the executions a worker
holds, a page of agents) reach the server in the same turn of the event loop. Each would cost the server one
asyncpg round (costly in CPU) and Postgres one statement's fixed costs. A `Coalescer` lets the first
reader of a turn lead: it yields once, so that the readers of the same turn can join, then runs one statement
for all of their keys on its own connection and hands each reader the rows of its key. A reader alone costs
one yield more than before. At most MAX_IN_FLIGHT statements of one kind run at once: a leader that finds them
running keeps its batch open until one ends, so that under load the batches grow rather than the statements.

What a reader sees does not change: Postgres readers run each statement outside a transaction (their own
snapshot), and the shared statement starts after every one of its readers asked, so it sees every write
committed before any of them asked. Each reader still checks the rows against its own organization (the
repositories do). If the shared read fails or the leader goes away (a cancelled request), every reader reads
its own key alone instead (the leader too, when others had joined it): a request meets only the errors its own
key causes, never those of another request's key read with it.

The end of this module has the repositories' side: `coalescing` (whether a unit of work's connection may share
its reads now), `coalesced` (a read of one key with this turn's others), and `coalesced_by_id`, the one call a
repository's `get` makes into it (base.py).

On SQLite only pages are coalesced (a point read there costs less than the turn of the loop a coalesced one
waits): the leader renders each page asked in its turn, one after the other, and the same page once. A SQLite
reader coalesces only while it holds no connection: the units of work wait for the fixed pool's connections in
the loop's own thread, so holding one across a wait could leave the others waiting for ever.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect

from controlplane_adapters.sql.hot import hot

if TYPE_CHECKING:
    from controlplane_adapters.sql.base import SqlConnection

Rows = Sequence[Any]
KeysRead = Callable[[list[Hashable]], Awaitable[Rows]]  # the rows of several keys, in one statement


# Distinct keys in one statement at most: a burst of thousands of different pages is several statements, which
# Postgres runs on several backends at once, not one statement on one.
MAX_KEYS = 64

# Statements of one coalescer in flight at most: a leader that finds them running waits, its batch still open to
# the readers that come meanwhile. Without a bound, a loaded node sent a statement a turn, each on a connection of
# its own: on a database short of cores, a score of them fought for the CPU and some waited ten times as long as
# the others (docs/benchmarks.md, "The random pages' tail"); with it, batches grow under load instead.
MAX_IN_FLIGHT = 2


class _LeaderGone(Exception):
    """The reader that was to run the shared statement failed or was cancelled."""


class Coalescer:
    """Runs `read(keys)` once for the distinct keys that readers ask for within one turn of the loop.

    `read` returns rows; `key_of(row)` says which key a row answers (a key may have no rows, or several)."""

    def __init__(
        self, key_of: Callable[[Any], Hashable], max_keys: int = MAX_KEYS, max_in_flight: int = MAX_IN_FLIGHT
    ) -> None:
        self._key_of = key_of
        self._max_keys = max_keys
        self._slots = asyncio.Semaphore(max_in_flight)
        self._open: dict[Hashable, list[asyncio.Future[list[Any]]]] | None = None
        self.batches = 0  # statements run, and keys read by them (for tests and benchmarks)
        self.keys = 0

    async def read(self, key: Hashable, read: KeysRead) -> list[Any]:
        """The rows of `key`; `read` runs the statement for a list of keys (on the caller's connection)."""
        batch = self._open
        if batch is not None and (key in batch or len(batch) < self._max_keys):  # join this turn's leader
            future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
            batch.setdefault(key, []).append(future)
            try:
                return await future
            except _LeaderGone:
                return await self._alone(key, read)
        batch = self._open = {key: []}
        try:
            await asyncio.sleep(0)  # the other readers of this turn run up to their read and join
            await self._slots.acquire()  # (while MAX_IN_FLIGHT run, the batch stays open: later readers join it)
        except BaseException:
            self._release(batch)
            raise
        finally:
            if self._open is batch:
                self._open = None  # closed: a reader from now on leads a batch of its own
        try:
            return await self._run(key, batch, read)
        finally:
            self._slots.release()

    async def _run(
        self, key: Hashable, batch: dict[Hashable, list[asyncio.Future[list[Any]]]], read: KeysRead
    ) -> list[Any]:
        try:
            rows = await read(list(batch))
            found: dict[Hashable, list[Any]] = {}
            key_of = self._key_of
            for row in rows:
                found.setdefault(key_of(row), []).append(row)
        except Exception:
            self._release(batch)  # each follower reads alone: it meets only what its own key causes
            if len(batch) == 1:
                raise
            return await self._alone(key, read)  # another reader's key may have failed the shared read
        except BaseException:
            self._release(batch)
            raise
        self.batches += 1
        self.keys += len(batch)
        for each, waiters in batch.items():
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(found.get(each, []))
        return found.get(key, [])

    async def _alone(self, key: Hashable, read: KeysRead) -> list[Any]:
        key_of = self._key_of
        return [row for row in await read([key]) if key_of(row) == key]

    @staticmethod
    def _release(batch: dict[Hashable, list[asyncio.Future[list[Any]]]]) -> None:
        for waiters in batch.values():
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_exception(_LeaderGone())


class Coalescing(Protocol):
    """A connection whose reads may be shared with the other readers of one turn of the loop (a unit of work's
    connection: connection.py)."""

    @property
    def dialect(self) -> Dialect: ...

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...

    async def coalesced_read(
        self,
        kind: Any,
        key: Hashable,
        key_of: Callable[[Any], Hashable],
        read: KeysRead,
    ) -> list[Any]: ...


def coalescing(connection: SqlConnection, what: str = "coalesces") -> Coalescing | None:
    """The connection, if its point reads (`coalesces`: a Postgres reader) or its pages (`coalesces_pages`) may
    be coalesced now: else None."""
    return connection if getattr(connection, what, False) else None  # type: ignore[return-value]


async def coalesced(
    connection: Coalescing,
    statement: Any,
    key: Hashable,
    key_of: Callable[[Any], Hashable],
    bind: Callable[[list[Any]], dict[str, Any]],
) -> list[Any]:
    """The rows of `key` read by `statement` (a hot statement whose parameters `bind` makes of a list of keys;
    `key_of` tells a row's key), in one statement with the other readers that ask for it in this turn."""

    async def read(keys: list[Any]) -> Any:
        return (await connection.execute(statement, bind(keys))).all()

    return await connection.coalesced_read(statement, key, key_of, read)


@functools.cache
def by_ids(table: sa.Table) -> sa.Select[Any]:
    """The rows of a list of ids (`keys`), whatever their organization: for coalesced point reads (Postgres),
    whose readers each keep only their own organization's row."""
    return hot(sa.select(table).where(table.c.id == sa.any_(sa.bindparam("keys", type_=postgresql.ARRAY(sa.String)))))


def _row_id(row: Any) -> Hashable:
    return row.id  # type: ignore[no-any-return]


async def coalesced_by_id(connection: Coalescing, table: sa.Table, object_id: str) -> list[Any]:
    """The rows of `table` whose id is `object_id`, whatever their organization (the caller keeps its own's), read
    with the other gets of rows of `table` in this turn of the loop (`coalesced`, with `by_ids`): what a
    repository's `get` calls on a Postgres reader (base.py)."""
    statement = by_ids(table)

    async def read(keys: list[Any]) -> Any:
        return (await connection.execute(statement, {"keys": keys})).all()

    return await connection.coalesced_read(statement, object_id, _row_id, read)
