"""Environments and their worker queues in SQL: the two tables, their row mapping, and the repositories."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.errors import DomainError, NotFound
from controlplane_domain.paging import PageRequest

environments = owned_table(
    "environments",
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("variables", Json, nullable=False),
    sa.Column("metadata", Json, nullable=False),
    unique=("name",),
)


worker_queues = owned_table(
    "worker_queues",
    sa.Column("environment_id", sa.String(64), sa.ForeignKey("environments.id"), nullable=False),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("max_workers", sa.Integer(), nullable=True),
    sa.Column("heartbeat_interval_seconds", sa.Integer(), nullable=False),
    sa.Index("ix_worker_queues_org_env", "organization_id", "environment_id", "created_at", "id"),
    unique=(("environment_id", "name"),),
)


QUEUE_ROWS = RowMapping(WorkerQueue, worker_queues)
queue_to_row, queue_to_domain = QUEUE_ROWS.to_row, QUEUE_ROWS.to_domain


@functools.cache
def _by_name() -> sa.Select[Any]:
    where = (environments.c.organization_id == sa.bindparam("organization_id"),
             environments.c.name == sa.bindparam("name"))  # fmt: skip
    return hot(sa.select(environments).where(*where))


class SqlEnvironmentRepository(SqlRepository[Environment]):
    rows = RowMapping(Environment, environments)
    noun = "environment"
    audited = Environment.audited

    async def get_by_name(self, organization_id: str, name: str) -> Environment | None:
        """(A bound worker key's heartbeat names its environment: the unique index on the name finds it.)"""
        row = (await self.connection.execute(_by_name(), {"organization_id": organization_id, "name": name})).first()
        return None if row is None else self._saw(row)


class SqlQueueRepository(SqlRepository[WorkerQueue]):
    rows = QUEUE_ROWS
    noun = "worker queue"
    audited = WorkerQueue.audited

    def _missing_reference(self, obj: WorkerQueue) -> DomainError:  # the environment, deleted meanwhile
        return NotFound("environment", obj.environment_id)

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]:
        return await self.list_where(organization_id, page, environment_id=environment_id)
