"""Engines: SQLite's (its PRAGMAs and `BEGIN IMMEDIATE` writers) and Postgres's, with msgspec for JSON columns."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy import event

from controlplane_adapters.sql.errors import OverBudget

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

R = TypeVar("R")

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
DEFAULT_STATEMENT_TIMEOUT_MS = 5000
"""A statement running longer is stopped (CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS; 0: no limit)."""
PROGRESS_STEPS = 10_000
"""SQLite calls the deadline check every this many virtual machine steps (well under a millisecond of work): a
point query takes a few hundred steps and never calls it."""


class DeadlineConnection(sqlite3.Connection):
    """A sqlite3 connection whose statements stop `statement_seconds` after they start: its progress handler
    (sqlite3's public `set_progress_handler`, installed once, when the connection opens) interrupts the statement
    running past its deadline, which then fails with SQLITE_INTERRUPT. On a connection without a limit no handler
    is installed.

    A statement costs one attribute store: the unit of work's connection (`LoopConnection`) clears `deadline`
    before each statement, and the handler's first call in a statement (after PROGRESS_STEPS steps, well under a
    millisecond) sets it from the clock; a statement that never calls the handler (nearly all) reads no clock."""

    __slots__ = ("deadline", "statement_seconds")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statement_seconds: float | None = None
        self.deadline: float | None = None
        """The running statement's deadline (a `time.monotonic()` instant); None: not set yet."""

    def limit(self, seconds: float) -> None:
        """Stop each statement `seconds` after it starts (its start: `deadline` cleared by the statement's runner)."""
        self.statement_seconds = seconds
        self.set_progress_handler(self._past_deadline, PROGRESS_STEPS)

    def within(self, seconds: float | None, run: Callable[[], R]) -> R:
        """`run()` (a statement and the reading of its rows) stopped once it has spent `seconds` of this thread's
        CPU time (OverBudget; None: no budget), or past the statement timeout (as any statement). A progress
        handler of its own, for `run` only: the connection's own (or none) is back after it, so that no other
        statement pays for it.

        CPU time of the thread rather than wall time: the budget is the work the statement does, which a process
        waiting for a core on a busy machine does not."""
        ends = time.thread_time() + (float("inf") if seconds is None else seconds)
        limit = self.statement_seconds
        deadline = None if limit is None else time.monotonic() + limit
        over = False

        def past_budget() -> int:
            nonlocal over
            if time.thread_time() > ends:
                over = True
                return 1
            return 1 if deadline is not None and time.monotonic() > deadline else 0

        self.set_progress_handler(past_budget, PROGRESS_STEPS)
        try:
            return run()
        except Exception as exc:
            if over:
                raise OverBudget(f"stopped past its budget of {(seconds or 0) * 1000:.0f} ms") from exc
            raise
        finally:
            self.set_progress_handler(None if limit is None else self._past_deadline, PROGRESS_STEPS)

    def _past_deadline(self) -> int:
        deadline = self.deadline
        if deadline is None:  # the statement's first check: its deadline starts now
            self.deadline = time.monotonic() + (self.statement_seconds or 0.0)
            return 0
        return 1 if time.monotonic() > deadline else 0


def create_engine(
    url: str,
    *,
    echo: bool = False,
    pool_size: int = DEFAULT_POOL_SIZE,
    pool_timeout: float = POOL_TIMEOUT_SECONDS,
    statement_timeout_ms: int = 0,
    generic_plans: bool = False,
) -> AsyncEngine:
    """An async engine; on SQLite: foreign keys on, WAL, a busy timeout and `BEGIN IMMEDIATE` transactions.

    `statement_timeout_ms` (Postgres): the server stops a statement running longer (its `statement_timeout`,
    set once per connection when it opens: nothing a statement). `generic_plans` (Postgres): every prepared
    statement runs its generic plan (`plan_cache_mode`), planned once a connection. On SQLite this engine serves
    the command line's work, on aiosqlite's thread; a SQLite server uses none: its units of work run on
    `create_sqlite_engine`'s, its migrations and health probe on another of those, in a thread of their own
    (`run_on`), so that it never loads SQLAlchemy's asyncio extension and the ORM it imports (imported here)."""
    from sqlalchemy.ext.asyncio import create_async_engine

    if is_sqlite(url):
        # A fixed pool: opening SQLite connections (and their PRAGMAs) per request would cost more than waiting.
        engine = create_async_engine(url, echo=echo, connect_args={"timeout": 30}, pool_size=8, max_overflow=0, **_JSON)
        _configure_sqlite(engine)
        return engine
    # No pre-ping: a connection the server dropped fails one request with 503 and is replaced (see operations.md).
    # Postgres: at most `pool_size` connections, opened on demand and kept; a unit of work that finds them all
    # busy waits for one (up to POOL_TIMEOUT_SECONDS, then 503). No overflow connections: under 32 concurrent
    # requests a pool of 20 with 10 overflow opened and closed a connection (asyncpg's connect, its TLS probe)
    # for nearly every request past the twentieth (docs/benchmarks.md, "Figures that were in the code").
    server = {"statement_timeout": str(statement_timeout_ms)} if statement_timeout_ms > 0 else {}
    if generic_plans:  # each prepared statement planned once a connection (docs/configuration.md)
        server["plan_cache_mode"] = "force_generic_plan"
    return create_async_engine(
        url,
        echo=echo,
        pool_size=pool_size,
        max_overflow=0,
        pool_timeout=pool_timeout,
        connect_args={"server_settings": server} if server else {},
        **_JSON,
    )


def create_sqlite_engine(
    url: str, *, echo: bool = False, autocheckpoint: bool = True, statement_timeout_ms: int = 0
) -> sa.Engine:
    """The synchronous engine the SQLite units of work run on, in the event loop's own thread.

    SQLite answers a point query in microseconds; handing each statement to a driver thread (aiosqlite) costs
    far more than running it. A unit of work then never yields to the loop until it ends, so transactions in
    one process never interleave or wait on each other. Other processes on the same file wait in SQLite's
    busy handler (up to 30 s); several processes belong on Postgres.

    `autocheckpoint=False` leaves WAL checkpoints to a `WalCheckpointer` (checkpoint.py), which must then run.

    `statement_timeout_ms` > 0: a statement running longer is interrupted (`DeadlineConnection`): a statement
    that walks too many rows holds the event loop no longer than that."""
    sync_url = sa.make_url(url).set(drivername="sqlite")
    connect_args: dict[str, Any] = {"timeout": 30, "check_same_thread": False, "factory": DeadlineConnection}
    engine = sa.create_engine(sync_url, echo=echo, connect_args=connect_args, **_JSON)
    _configure_sqlite_events(engine, autocheckpoint=autocheckpoint, statement_timeout_ms=statement_timeout_ms)
    return engine


@functools.cache
def _admin_thread() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="controlplane-sqlite")


async def in_admin_thread(function: Callable[..., R], *args: Any) -> R:
    """`function(*args)` in the thread of a SQLite server's work off the event loop on a synchronous engine (its
    migrations, its start's checks, the health probe): one thread of its own, made on first use, as aiosqlite
    had, so that a probe never queues behind the default executor's work (files, long reads)."""
    return await asyncio.get_running_loop().run_in_executor(_admin_thread(), function, *args)


async def run_on(engine: AsyncEngine | sa.Engine, work: Callable[[sa.Connection], R], *, begin: bool = False) -> R:
    """`work(connection)` on a connection of `engine`, in a transaction committed at its end (`begin`) or rolled
    back: an async engine's connection (`run_sync`), or a synchronous engine's in `in_admin_thread` (a SQLite
    server's migrations and its start's checks: off the event loop, as aiosqlite's thread ran them)."""
    if isinstance(engine, sa.Engine):
        return await in_admin_thread(_run_in_thread, engine, work, begin)
    async with engine.begin() if begin else engine.connect() as connection:
        return await connection.run_sync(work)


def _run_in_thread(engine: sa.Engine, work: Callable[[sa.Connection], R], begin: bool) -> R:
    with engine.begin() if begin else engine.connect() as connection:
        return work(connection)


async def dispose(engine: AsyncEngine | sa.Engine) -> None:
    """Close `engine`'s pooled connections, whichever kind of engine it is."""
    if isinstance(engine, sa.Engine):
        engine.dispose()
    else:
        await engine.dispose()


def _configure_sqlite(engine: AsyncEngine) -> None:
    _configure_sqlite_events(engine.sync_engine)


def _configure_sqlite_events(engine: sa.Engine, *, autocheckpoint: bool = True, statement_timeout_ms: int = 0) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        if statement_timeout_ms > 0 and isinstance(dbapi_connection, DeadlineConnection):
            dbapi_connection.limit(statement_timeout_ms / 1000)
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
        # the transaction on the driver already (see LoopConnection) needs no second BEGIN.
        writer = not connection.get_execution_options().get(READ_ONLY, False)
        if writer and not getattr(connection.connection.dbapi_connection, "in_transaction", False):  # aiosqlite: no
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        # readers run each statement in autocommit: WAL gives it a consistent snapshot, without a lock
