"""SQL repositories on one AsyncConnection (the unit of work's transaction); every query is org-scoped."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from controlplane_adapters.sql import mapping, tables
from controlplane_domain.agents import Agent
from controlplane_domain.api_keys import ApiKey
from controlplane_domain.errors import Conflict
from controlplane_domain.idempotency import IdempotencyRecord
from controlplane_domain.llm_models import LlmModel
from controlplane_domain.organizations import OrganizationSettings
from controlplane_domain.paging import PageRequest
from controlplane_domain.teams import Team
from controlplane_domain.workers import Worker

T = TypeVar("T")


class _Table(Generic[T]):
    """Add, get, update, delete and page one organization-owned table keyed by `id`."""

    table: sa.Table
    to_row: Callable[[T], dict[str, Any]]
    to_domain: Callable[[Any], T]
    unique_field = "name"
    noun = "object"

    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection

    def _conflict(self, obj: T, exc: IntegrityError) -> Conflict:
        value = getattr(obj, self.unique_field)
        return Conflict(f"{self.noun} with {self.unique_field} '{value}' already exists", {"field": self.unique_field})

    async def add(self, obj: T) -> None:
        try:
            await self.connection.execute(self.table.insert().values(**type(self).to_row(obj)))
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc

    async def get(self, organization_id: str, object_id: str) -> T | None:
        row = (
            await self.connection.execute(
                sa.select(self.table).where(
                    self.table.c.organization_id == organization_id, self.table.c.id == object_id
                )
            )
        ).first()
        return None if row is None else type(self).to_domain(row)

    async def update(self, obj: T) -> None:
        values = type(self).to_row(obj)
        try:
            await self.connection.execute(
                self.table.update()
                .where(self.table.c.organization_id == values["organization_id"], self.table.c.id == values["id"])
                .values(**values)
            )
        except IntegrityError as exc:
            raise self._conflict(obj, exc) from exc

    async def delete(self, organization_id: str, object_id: str) -> None:
        await self.connection.execute(
            self.table.delete().where(self.table.c.organization_id == organization_id, self.table.c.id == object_id)
        )

    async def _page(self, where: Sequence[sa.ColumnElement[bool]], page: PageRequest) -> tuple[list[T], int]:
        total = (
            await self.connection.execute(sa.select(sa.func.count()).select_from(self.table).where(*where))
        ).scalar_one()
        rows = await self.connection.execute(
            sa.select(self.table)
            .where(*where)
            .order_by(self.table.c.created_at, self.table.c.id)
            .limit(page.limit)
            .offset(page.offset)
        )
        return [type(self).to_domain(row) for row in rows], total

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[T], int]:
        return await self._page([self.table.c.organization_id == organization_id], page)


class SqlAgentRepository(_Table[Agent]):
    table = tables.agents
    to_row = staticmethod(mapping.agent_to_row)
    to_domain = staticmethod(mapping.agent_to_domain)
    noun = "agent"

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        if not agent_ids:
            return []
        t = self.table
        rows = await self.connection.execute(
            sa.select(t).where(t.c.organization_id == organization_id, t.c.id.in_(list(agent_ids)))
        )
        return [mapping.agent_to_domain(row) for row in rows]

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        if not team_ids:
            return []
        t = self.table
        rows = await self.connection.execute(
            sa.select(t)
            .where(t.c.organization_id == organization_id, t.c.team_id.in_(list(team_ids)))
            .order_by(t.c.created_at, t.c.id)
        )
        return [mapping.agent_to_domain(row) for row in rows]

    async def set_team(
        self, organization_id: str, agent_ids: Sequence[str], team_id: str | None, now: datetime
    ) -> None:
        t = self.table
        ids = sorted(set(agent_ids))
        where = (t.c.organization_id == organization_id, t.c.id.in_(ids))
        if self.connection.dialect.name == "postgresql":
            # Lock the rows in one global order so concurrent membership changes cannot deadlock.
            await self.connection.execute(sa.select(t.c.id).where(*where).order_by(t.c.id).with_for_update())
        await self.connection.execute(t.update().where(*where).values(team_id=team_id, updated_at=now))


class SqlTeamRepository(_Table[Team]):
    table = tables.teams
    to_row = staticmethod(mapping.team_to_row)
    to_domain = staticmethod(mapping.team_to_domain)
    noun = "team"


class SqlModelRepository(_Table[LlmModel]):
    table = tables.llm_models
    to_row = staticmethod(mapping.model_to_row)
    to_domain = staticmethod(mapping.model_to_domain)
    unique_field = "value"
    noun = "model"

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        where = [self.table.c.organization_id == organization_id]
        if enabled_only:
            where.append(self.table.c.enabled.is_(True))
        return await self._page(where, page)


class SqlWorkerRepository:
    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        t = tables.workers
        row = (
            await self.connection.execute(
                sa.select(t).where(t.c.organization_id == organization_id, t.c.worker_id == worker_id)
            )
        ).first()
        return None if row is None else mapping.worker_to_domain(row)

    async def save(self, worker: Worker) -> None:
        t = tables.workers
        values = mapping.worker_to_row(worker)
        # registered_at keeps the first heartbeat's value
        await self.connection.execute(
            _upsert(self.connection, t, values, ["organization_id", "worker_id"], keep=["registered_at"])
        )

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        t = tables.workers
        where = t.c.organization_id == organization_id
        total = (await self.connection.execute(sa.select(sa.func.count()).select_from(t).where(where))).scalar_one()
        rows = await self.connection.execute(
            sa.select(t).where(where).order_by(t.c.registered_at, t.c.worker_id).limit(page.limit).offset(page.offset)
        )
        return [mapping.worker_to_domain(row) for row in rows], total


class SqlApiKeyRepository(_Table[ApiKey]):
    table = tables.api_keys
    to_row = staticmethod(mapping.api_key_to_row)
    to_domain = staticmethod(mapping.api_key_to_domain)
    unique_field = "id"
    noun = "api key"

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        row = (await self.connection.execute(sa.select(self.table).where(self.table.c.id == key_id))).first()
        return None if row is None else mapping.api_key_to_domain(row)


def _upsert(
    connection: AsyncConnection,
    table: sa.Table,
    values: dict[str, Any],
    keys: Sequence[str],
    keep: Sequence[str] = (),
) -> Any:
    """INSERT ... ON CONFLICT (keys) DO UPDATE every column but the keys and those to `keep`."""
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    changes = {name: value for name, value in values.items() if name not in keys and name not in keep}
    return insert(table).values(**values).on_conflict_do_update(index_elements=list(keys), set_=changes)


class SqlOrganizationRepository:
    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        t = tables.organization_settings
        row = (await self.connection.execute(sa.select(t).where(t.c.organization_id == organization_id))).first()
        return None if row is None else mapping.settings_to_domain(row)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        values = mapping.settings_to_row(settings)
        await self.connection.execute(
            _upsert(self.connection, tables.organization_settings, values, ["organization_id"])
        )


class SqlIdempotencyRepository:
    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection

    def _where(self, organization_id: str, key: str) -> tuple[sa.ColumnElement[bool], ...]:
        t = tables.idempotency_records
        return (t.c.organization_id == organization_id, t.c.key == key)

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        t = tables.idempotency_records
        row = (await self.connection.execute(sa.select(t).where(*self._where(organization_id, key)))).first()
        return None if row is None else mapping.record_to_domain(row)

    async def add(self, record: IdempotencyRecord) -> None:
        try:
            await self.connection.execute(tables.idempotency_records.insert().values(**mapping.record_to_row(record)))
        except IntegrityError as exc:
            raise Conflict("idempotency key in use") from exc

    async def save(self, record: IdempotencyRecord) -> None:
        values = mapping.record_to_row(record)
        await self.connection.execute(
            _upsert(self.connection, tables.idempotency_records, values, ["organization_id", "key"])
        )

    async def delete(self, organization_id: str, key: str) -> None:
        await self.connection.execute(tables.idempotency_records.delete().where(*self._where(organization_id, key)))
