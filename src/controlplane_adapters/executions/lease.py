"""The lease's dialect strategies: on SQLite, what `lease_next` reads (one statement), then the domain's rule
(`lease_steps.lease_in_steps`); on Postgres, the whole lease as one statement (`lease_in_one`), kept for the
round trips it saves on the hot path (docs/benchmarks.md). Both are pinned to the domain's rule
(`executions.entity.lease_order` and `leased`) by `tests/contract/test_lease_rule.py`, a property test on every
store."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.agents.sql import agents
from controlplane_adapters.environments.sql import worker_queues
from controlplane_adapters.executions.statements import is_queued
from controlplane_adapters.executions.table import execution_events, executions
from controlplane_adapters.sql.columns import UtcDateTime
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.workers.sql import workers
from controlplane_domain.environments.entity import QueueStatus
from controlplane_domain.executions.entity import ExecutionStatus

LEASE_TABLES = (worker_queues, workers, executions, agents)


@functools.cache
def lease_candidate() -> sa.Select[Any]:
    """SQLite: what a lease reads, as one statement (its writer holds the database lock: nothing to skip): the
    queue, the worker (outer-joined by its id), the queue's oldest queued execution and its agent, each table's
    columns in order."""
    q, w, x, a = LEASE_TABLES
    queued = x.alias("queued")
    oldest = (
        sa.select(queued.c.id)
        .where(
            queued.c.organization_id == q.c.organization_id,
            queued.c.worker_queue_id == q.c.id,
            is_queued(queued.c.status),
        )
        .order_by(queued.c.queued_at, queued.c.id)
        .limit(1)
        .scalar_subquery()
    )
    worker_of = sa.and_(w.c.organization_id == q.c.organization_id, w.c.worker_id == sa.bindparam("worker_id"))
    execution_of = sa.and_(x.c.organization_id == q.c.organization_id, x.c.id == oldest)
    agent_of = sa.and_(a.c.organization_id == x.c.organization_id, a.c.id == x.c.agent_id)
    columns = [
        column.label(f"{prefix}_{column.name}")
        for prefix, table in zip("qwxa", LEASE_TABLES, strict=True)
        for column in table.columns
    ]
    joined = q.outerjoin(w, worker_of).outerjoin(x, execution_of).outerjoin(a, agent_of)
    where = (q.c.organization_id == sa.bindparam("organization_id"), q.c.id == sa.bindparam("queue_id"))
    return hot(sa.select(*columns).select_from(joined).where(*where))


@functools.cache
def lease_in_one() -> sa.Select[Any]:
    """Postgres: a whole lease as one statement, what `executions.leased` decides written in SQL.

    `candidate`: the queue's oldest queued execution, if the queue is active (`FOR UPDATE SKIP LOCKED`: one that
    another lease is taking is skipped). `leased`: that execution running, attempt + 1, held by the worker until
    `expires_at`, `started_at` and `updated_at` now, `last_seq` + 1. `status_event`: its `status` event (status,
    attempt, worker_id) at the new `last_seq`. Then the queue (no row: no such queue), the worker (outer-joined by
    its id), the execution as leased and its agent, each table's columns in order. A statement of its own transaction:
    the row is locked only while it runs. (The parameters are named `lease_*`: one named like a column of the
    updated table would join its SET clause.)"""
    q, w, x, a = LEASE_TABLES
    e = execution_events
    organization: sa.BindParameter[str] = sa.bindparam("lease_organization_id", type_=sa.String())
    queue_id: sa.BindParameter[str] = sa.bindparam("lease_queue_id", type_=sa.String())
    worker_id: sa.BindParameter[str] = sa.bindparam("lease_worker_id", type_=sa.String())
    now = sa.bindparam("lease_now", type_=UtcDateTime())
    is_active = q.c.status == sa.literal_column(f"'{QueueStatus.ACTIVE.value}'")
    active = sa.exists().where(q.c.organization_id == organization, q.c.id == queue_id, is_active)
    candidate = (
        sa.select(x.c.organization_id, x.c.id)
        .where(
            x.c.organization_id == organization,
            x.c.worker_queue_id == queue_id,
            is_queued(x.c.status),
            active,
        )
        .order_by(x.c.queued_at, x.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
        .cte("candidate")
    )
    leased = (
        x.update()
        .where(x.c.organization_id == candidate.c.organization_id, x.c.id == candidate.c.id)
        .values(
            status=sa.literal_column(f"'{ExecutionStatus.RUNNING.value}'"),
            attempt=x.c.attempt + sa.literal_column("1"),
            worker_id=worker_id,
            lease_expires_at=sa.bindparam("lease_until", type_=UtcDateTime()),
            started_at=now,
            updated_at=now,
            last_seq=x.c.last_seq + sa.literal_column("1"),
        )
        .returning(*x.columns)
        .cte("leased")
    )
    data = sa.func.jsonb_build_object(
        sa.literal_column("'status'"), leased.c.status, sa.literal_column("'attempt'"), leased.c.attempt,
        sa.literal_column("'worker_id'"), leased.c.worker_id,
    )  # fmt: skip
    event = sa.select(
        leased.c.id, leased.c.organization_id, leased.c.last_seq, sa.literal_column("'status'"), data,
        leased.c.attempt, leased.c.updated_at,
    )  # fmt: skip
    status_event = (
        e.insert()
        .from_select(["execution_id", "organization_id", "seq", "type", "data", "attempt", "created_at"], event)
        .cte("status_event")
    )
    worker_of = sa.and_(w.c.organization_id == q.c.organization_id, w.c.worker_id == worker_id)
    agent_of = sa.and_(a.c.organization_id == leased.c.organization_id, a.c.id == leased.c.agent_id)
    columns = [
        *(column.label(f"q_{column.name}") for column in q.columns),
        *(column.label(f"w_{column.name}") for column in w.columns),
        *(leased.c[column.name].label(f"x_{column.name}") for column in x.columns),
        *(column.label(f"a_{column.name}") for column in a.columns),
    ]
    joined = q.outerjoin(w, worker_of).outerjoin(leased, sa.true()).outerjoin(a, agent_of)
    where = (q.c.organization_id == organization, q.c.id == queue_id)
    return hot(sa.select(*columns).select_from(joined).where(*where).add_cte(status_event), atomic=True)
