"""Workers in SQL: the table (keyed by organization and worker id), its row mapping, and the repository."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from controlplane_adapters.executions.mapping import execution_to_domain
from controlplane_adapters.executions.table import executions, is_held
from controlplane_adapters.sql.base import SqlConnection
from controlplane_adapters.sql.coalesced import coalesced, coalescing
from controlplane_adapters.sql.columns import Json, UtcDateTime, metadata
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.pages import plain_page
from controlplane_adapters.sql.rows import RowMapping
from controlplane_adapters.sql.statements import insert_new, slices, upsert
from controlplane_domain.executions.entity import Execution
from controlplane_domain.paging import PageRequest
from controlplane_domain.workers.entity import Worker, WorkerStatus

REPORTS_A_STATEMENT = 100
"""Rows a statement of `save_reports` (the heartbeat flush's writes; docs/benchmarks.md)."""

workers = sa.Table(
    "workers",
    metadata,
    sa.Column("organization_id", sa.String(255), primary_key=True),
    sa.Column("worker_id", sa.String(255), primary_key=True),
    sa.Column("environment_name", sa.String(255), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("tasks_processed", sa.BigInteger(), nullable=False),
    sa.Column("current_task_id", sa.String(255), nullable=True),
    sa.Column("worker_metadata", Json, nullable=False),
    sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
    sa.Column("registered_at", UtcDateTime(), nullable=False),
    sa.Column("last_heartbeat_at", UtcDateTime(), nullable=False),
    sa.Column("queue_id", sa.String(64), nullable=True),
    sa.Index("ix_workers_org_registered", "organization_id", "registered_at", "worker_id"),
    sa.Index("ix_workers_org_queue_seen", "organization_id", "queue_id", "last_heartbeat_at"),
)


WORKER_ROWS = RowMapping(Worker, workers)
worker_to_row, worker_to_domain = WORKER_ROWS.to_row, WORKER_ROWS.to_domain


def worker_key(row: Any) -> Hashable:
    """A row's (organization, worker): the key of coalesced reads by worker (its own, and the executions it holds)."""
    return (row.organization_id, row.worker_id)


def worker_parameters(keys: list[Any]) -> dict[str, Any]:
    """A coalesced read's (organization, worker) keys as the two arrays its statement unnests."""
    return {"organization_ids": [key[0] for key in keys], "worker_ids": [key[1] for key in keys]}


def asked_workers() -> sa.TableValuedAlias:
    """The (organization, worker) pairs of a coalesced read by worker, unnested from `worker_parameters`' two arrays
    (Postgres): `asked.organization_id`, `asked.worker_id`."""
    texts = postgresql.ARRAY(sa.String)
    return (
        sa.func.unnest(sa.bindparam("organization_ids", type_=texts), sa.bindparam("worker_ids", type_=texts))
        .table_valued("organization_id", "worker_id")
        .render_derived(name="asked")
    )


def _of_asked(table: sa.Table, asked: sa.TableValuedAlias) -> sa.ColumnElement[bool]:
    """`table`'s rows of the asked (organization, worker) pairs (`asked_workers`)."""
    return sa.and_(table.c.organization_id == asked.c.organization_id, table.c.worker_id == asked.c.worker_id)


@functools.cache
def _workers_by_keys() -> sa.Select[Any]:
    """The workers of a list of (organization, worker) pairs (`asked_workers`): for coalesced gets (Postgres
    readers: a turn's heartbeats read their workers in one statement, on no connection of their own)."""
    t, asked = workers, asked_workers()
    return hot(sa.select(t).select_from(asked.join(t, _of_asked(t, asked))))


@functools.cache
def worker_by_id() -> sa.Select[Any]:
    t = workers
    return hot(
        sa.select(t).where(
            t.c.organization_id == sa.bindparam("organization_id"), t.c.worker_id == sa.bindparam("worker_id")
        )
    )


# What a worker holds: the executions it runs (a heartbeat's read, and the lease renewals')


@functools.cache
def held_by_worker() -> sa.Select[Any]:
    t = executions
    return hot(
        sa.select(t).where(
            t.c.organization_id == sa.bindparam("organization_id"),
            t.c.worker_id == sa.bindparam("worker_id"),
            is_held(t.c.status),
        )
    )


@functools.cache
def held_by_workers() -> sa.Select[Any]:
    """The executions held by a list of (organization, worker) pairs (`asked_workers`): for coalesced reads
    (Postgres), whose readers each keep only the rows of their own pair."""
    t, asked = executions, asked_workers()
    return hot(sa.select(t).select_from(asked.join(t, _of_asked(t, asked))).where(is_held(t.c.status)))


HELD_TABLES = (workers, executions)


@functools.cache
def _workers_and_held() -> sa.Select[Any]:
    """A list of (organization, worker) pairs (`asked_workers`) left-joined to their worker and the executions it
    holds, each row led by its pair: a row a pair that holds nothing, one a held execution otherwise (Postgres
    readers: a turn's heartbeats in one statement)."""
    (w, x), asked = HELD_TABLES, asked_workers()
    keys = (asked.c.organization_id.label("asked_organization"), asked.c.worker_id.label("asked"))
    held = sa.and_(_of_asked(x, asked), is_held(x.c.status))
    return hot(sa.select(*keys, *w.c, *x.c).select_from(asked.outerjoin(w, _of_asked(w, asked)).outerjoin(x, held)))


def _asked(row: Any) -> Hashable:
    return (row[0], row[1])


_WORKER_KEY = ("organization_id", "worker_id")
_WORKER_KEPT = ("registered_at", "queue_id")  # what an upsert of a stored worker leaves as it is


@functools.cache
def _move_worker() -> sa.Update:
    t = workers
    where = (t.c.organization_id == sa.bindparam("where_organization_id"), t.c.worker_id == sa.bindparam("where_id"))
    return hot(t.update().where(*where).values(queue_id=sa.bindparam("queue_id")))


class SqlWorkerRepository:
    table = workers  # for `save_reports`, whose parameter hides the module's name

    def __init__(self, connection: SqlConnection) -> None:
        self.connection = connection

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        reader = coalescing(self.connection)
        if reader is not None:  # a Postgres reader (heartbeats): one statement for this turn's workers
            rows = await coalesced(
                reader, _workers_by_keys(), (organization_id, worker_id), worker_key, worker_parameters
            )
            return worker_to_domain(rows[0]) if rows else None
        parameters = {"organization_id": organization_id, "worker_id": worker_id}
        row = (await self.connection.execute(worker_by_id(), parameters)).first()
        return None if row is None else worker_to_domain(row)

    async def worker_and_held(self, organization_id: str, worker_id: str) -> tuple[Worker | None, list[Execution]]:
        """On a Postgres reader, one statement with the other heartbeats of this turn (`_workers_and_held`);
        elsewhere (SQLite, in the loop's thread; a writer) two point reads, which cost SQLite no more than the join
        and cost less to turn into rows than its wide row of NULLs for a worker that holds nothing."""
        reader = coalescing(self.connection)
        if reader is None:
            parameters = {"organization_id": organization_id, "worker_id": worker_id}
            row = (await self.connection.execute(worker_by_id(), parameters)).first()
            held = await self.connection.execute(held_by_worker(), parameters)
            return None if row is None else worker_to_domain(row), [execution_to_domain(each) for each in held]
        key = (organization_id, worker_id)
        found = await coalesced(reader, _workers_and_held(), key, _asked, worker_parameters)
        worker: Worker | None = None
        executions_held: list[Execution] = []
        for row in found:
            stored, execution = slices(row[2:], HELD_TABLES)
            if worker is None and stored is not None:
                worker = worker_to_domain(stored)
            if execution is not None:
                executions_held.append(execution_to_domain(execution))
        return worker, executions_held

    async def register(self, worker: Worker) -> bool:
        """INSERT ... ON CONFLICT DO NOTHING: a concurrent registration waits for the first to commit, then
        inserts nothing (rowcount 0)."""
        statement = insert_new(self.connection.dialect.name, workers, _WORKER_KEY)
        result = await self.connection.execute(statement, worker_to_row(worker))
        return bool(result.rowcount == 1)

    async def save(self, worker: Worker) -> None:
        """Insert or update in one statement; registered_at and queue_id keep their stored values."""
        statement = upsert(self.connection.dialect.name, workers, _WORKER_KEY, _WORKER_KEPT)
        await self.connection.execute(statement, worker_to_row(worker))

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        """Executemanys of the upsert, which leaves a row alone where the stored heartbeat is later, of at most
        REPORTS_A_STATEMENT rows each: a fleet's flush (thousands of rows) turns its rows into parameters a
        statement at a time, and on Postgres the requests that came meanwhile run while each statement is away."""
        dialect = self.connection.dialect.name
        statement = upsert(dialect, self.table, _WORKER_KEY, _WORKER_KEPT, newer="last_heartbeat_at")
        for start in range(0, len(workers), REPORTS_A_STATEMENT):
            some = workers[start : start + REPORTS_A_STATEMENT]
            await self.connection.execute(statement, [worker_to_row(worker) for worker in some])

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        parameters = {"where_organization_id": organization_id, "where_id": worker_id, "queue_id": queue_id}
        await self.connection.execute(_move_worker(), parameters)

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        found, total = await plain_page(self.connection, organization_id, page, workers, ("registered_at", "worker_id"))
        return [worker_to_domain(row) for row in found], total

    async def recent(self, organization_id: str, limit: int) -> list[Worker]:
        """Read by the primary key's organization prefix; the newest `limit` kept by the database's top-N sort."""
        t = workers
        statement = (
            sa.select(t)
            .where(t.c.organization_id == organization_id)
            .order_by(t.c.last_heartbeat_at.desc(), t.c.worker_id)
            .limit(limit)
        )
        return [worker_to_domain(row) for row in await self.connection.execute(statement)]

    async def silent_since(self, before: datetime, limit: int, offset: int) -> list[Worker]:
        t = workers
        statement = (
            sa.select(t)
            .where(t.c.status != WorkerStatus.OFFLINE.value, t.c.last_heartbeat_at < before)
            .order_by(t.c.last_heartbeat_at, t.c.organization_id, t.c.worker_id)
            .limit(limit)
            .offset(offset)
        )
        return [worker_to_domain(row) for row in await self.connection.execute(statement)]

    async def mark_offline(self, worker: Worker) -> bool:
        """A compare-and-set on the status and the last heartbeat read: a concurrent sweep's UPDATE waits for the
        first to commit, then finds the status changed and updates nothing."""
        t = workers
        result = await self.connection.execute(
            t.update()
            .where(
                t.c.organization_id == worker.organization_id,
                t.c.worker_id == worker.worker_id,
                t.c.status == worker.status.value,
                t.c.last_heartbeat_at == worker.last_heartbeat_at,
            )
            .values(status=WorkerStatus.OFFLINE.value)
        )
        return bool(result.rowcount == 1)

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        if not queue_ids:
            return {}
        t = workers
        rows = await self.connection.execute(
            sa.select(t.c.queue_id, sa.func.count())
            .where(
                t.c.organization_id == organization_id,
                t.c.queue_id.in_(list(queue_ids)),
                t.c.status != WorkerStatus.OFFLINE.value,
                t.c.last_heartbeat_at >= since,
            )
            .group_by(t.c.queue_id)
        )
        return {str(queue_id): int(count) for queue_id, count in rows}
