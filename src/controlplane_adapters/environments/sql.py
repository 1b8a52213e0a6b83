"""Environments and their worker queues in SQL: the two tables, their row mapping, and the repositories."""

from __future__ import annotations

import functools
from typing import Any

import sqlalchemy as sa

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import Json, owned_table
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.rows import RowMapping
from controlplane_domain.environments.entity import Environment, QueueStatus, WorkerQueue
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


def queue_to_row(queue: WorkerQueue) -> dict[str, Any]:
    return {
        "id": queue.id,
        "organization_id": queue.organization_id,
        "environment_id": queue.environment_id,
        "name": queue.name,
        "description": queue.description,
        "status": queue.status.value,
        "max_workers": queue.max_workers,
        "heartbeat_interval_seconds": queue.heartbeat_interval_seconds,
        "created_at": queue.created_at,
        "updated_at": queue.updated_at,
    }


def queue_to_domain(row: Any) -> WorkerQueue:
    return WorkerQueue(
        id=row.id,
        organization_id=row.organization_id,
        environment_id=row.environment_id,
        name=row.name,
        description=row.description,
        status=QueueStatus(row.status),
        max_workers=row.max_workers,
        heartbeat_interval_seconds=row.heartbeat_interval_seconds,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


@functools.cache
def _by_name() -> sa.Select[Any]:
    where = (environments.c.organization_id == sa.bindparam("organization_id"),
             environments.c.name == sa.bindparam("name"))  # fmt: skip
    return hot(sa.select(environments).where(*where))


class SqlEnvironmentRepository(SqlRepository[Environment]):
    rows = RowMapping(Environment, environments)
    noun = "environment"

    async def get_by_name(self, organization_id: str, name: str) -> Environment | None:
        """(A bound worker key's heartbeat names its environment: the unique index on the name finds it.)"""
        row = (await self.connection.execute(_by_name(), {"organization_id": organization_id, "name": name})).first()
        return None if row is None else self._saw(row)


class SqlQueueRepository(SqlRepository[WorkerQueue]):
    table = worker_queues
    to_row = staticmethod(queue_to_row)
    to_domain = staticmethod(queue_to_domain)
    noun = "worker queue"

    def _missing_reference(self, obj: WorkerQueue) -> DomainError:  # the environment, deleted meanwhile
        return NotFound("environment", obj.environment_id)

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]:
        return await self.list_where(organization_id, page, environment_id=environment_id)
